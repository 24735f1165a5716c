"""The running game's state: small, flat and cheap to copy (pipeline: **running game**).

Everything that changes during a game lives here and nothing else does: zones as lists of
card ids, where each card is, each card's face and rotation, variables (global, per player,
per card), the generator state, the paused continuation (a stack of frames: procedure,
program counter, local slots), what each seat knows of the cards it does not see
(knowledge.py), the decision waiting for an answer and, with explicit chance, the random
outcomes answered since the last decision (chance.py). Copying it is a
handful of list copies, which is what search agents do thousands of times per second; it
also round-trips through JSON for `--save` / `resume`.
"""

from __future__ import annotations

from typing import NamedTuple

from .limits import MAX_WRITTEN, spend, written_text


# The player of a chance decision (explicit chance, chance.py): OpenSpiel's chance player id.
CHANCE = -1

# The value of choose_many's "done" option (no value of the rules language can equal it).
DONE = "\x00done"


class Option(NamedTuple):
    label: str
    value: object


class Decision(NamedTuple):
    """A choice waiting for an agent: who, what is asked, and the legal options.

    A named tuple: immutable, cheap to build (the engine makes one per decision).
    """
    player: int                 # 0-based seat, or CHANCE
    prompt: str
    options: tuple              # of Option
    kind: str = "choose"        # "choose", "choose_many" or "chance" (explicit chance: a random outcome)
    secret: bool = False        # the choice is hidden from other players until revealed
    picked: tuple = ()          # choose_many: what was picked so far
    help: str = ""              # a line interactive front ends show (e.g. codes to type)
    confirm: bool = False       # interactive front ends ask to confirm before committing
    pass_index: int = -1        # the `pass:` option, which one keystroke (Enter) picks at a terminal
    value_type: str = "any"     # what the options are: "card", "player", "int", "text", ...

    @property
    def labels(self) -> list[str]:
        return [o.label for o in self.options]


class Frame:
    """One active procedure: its compiled code, where it is, its local slots, and how many
    `simultaneous` blocks it is inside (decisions made there are secret)."""
    __slots__ = ("proc", "pc", "locals", "ret_slot", "secret")

    def __init__(self, proc, pc: int, locals_: list, ret_slot: int = -1, secret: int = 0):
        self.proc = proc
        self.pc = pc
        self.locals = locals_
        self.ret_slot = ret_slot
        self.secret = secret

    def copy(self) -> "Frame":
        return Frame(self.proc, self.pc, self.locals[:], self.ret_slot, self.secret)


class GameState:
    __slots__ = ("zones", "where", "faceup", "turn", "known", "gvars", "pvars", "cvars", "rng", "frames",
                 "pending", "result", "decisions", "pending_slot", "chance")

    def copy(self) -> "GameState":
        s = GameState.__new__(GameState)
        s.zones = [z[:] for z in self.zones]
        s.where = self.where[:]
        s.faceup = self.faceup[:]
        s.turn = self.turn[:]
        s.known = self.known[:]
        s.gvars = self.gvars[:]
        s.pvars = [v[:] for v in self.pvars]
        s.cvars = [v[:] for v in self.cvars]
        s.rng = self.rng
        s.frames = [f.copy() for f in self.frames]
        s.pending = self.pending
        s.result = self.result
        s.decisions = self.decisions
        s.pending_slot = self.pending_slot
        s.chance = self.chance
        return s


def _to_json_value(v, budget: list | None = None):
    """v as JSON (a tuple as {"t": [...]}), refused (R015) past limits.MAX_WRITTEN characters
    or items: a list that shares itself must not take gigabytes to save."""
    if budget is None:
        budget = [MAX_WRITTEN]
    if isinstance(v, tuple):
        return {"t": [_to_json_value(x, budget) for x in v]}
    if isinstance(v, list):
        return [_to_json_value(x, budget) for x in v]
    if isinstance(v, str):
        return written_text(budget, v)
    spend(budget, 1)
    return v


def _from_json_value(v):
    if isinstance(v, dict) and "t" in v:
        return tuple(_from_json_value(x) for x in v["t"])
    if isinstance(v, list):
        return [_from_json_value(x) for x in v]
    return v


def state_to_json(st: GameState) -> dict:
    pending = None
    if st.pending is not None:
        d = st.pending
        pending = {"player": d.player, "prompt": d.prompt, "kind": d.kind, "secret": d.secret,
                   "picked": _to_json_value(d.picked), "help": d.help, "confirm": d.confirm,
                   "pass_index": d.pass_index, "value_type": d.value_type,
                   "options": [[o.label, _to_json_value(o.value)] for o in d.options]}
    data = {
        "zones": st.zones, "where": st.where, "faceup": st.faceup, "turn": st.turn, "known": st.known,
        "gvars": _to_json_value(st.gvars), "pvars": _to_json_value(st.pvars),
        "cvars": _to_json_value(st.cvars), "rng": str(st.rng),
        "frames": [{"proc": f.proc.name, "pc": f.pc, "locals": _to_json_value(f.locals), "ret": f.ret_slot,
                    "secret": f.secret} for f in st.frames],
        "pending": pending, "pending_slot": st.pending_slot,
        "result": st.result, "decisions": st.decisions,
    }
    if st.chance:
        data["chance"] = list(st.chance)
    return data


def state_from_json(data: dict, procs: dict) -> GameState:
    """Rebuild a state saved by `state_to_json`; `procs` maps names to compiled procedures."""
    s = GameState.__new__(GameState)
    s.zones = [list(z) for z in data["zones"]]
    s.where = list(data["where"])
    s.faceup = list(data["faceup"])
    s.turn = list(data["turn"])
    # Saves from before knowledge was kept: nobody remembers anything they do not see.
    s.known = list(data.get("known") or [0] * len(s.where))
    s.gvars = _from_json_value(data["gvars"])
    s.pvars = _from_json_value(data["pvars"])
    s.cvars = _from_json_value(data["cvars"])
    s.rng = int(data["rng"])
    s.frames = [Frame(procs[f["proc"]], f["pc"], _from_json_value(f["locals"]), f["ret"], f.get("secret", 0))
                for f in data["frames"]]
    p = data["pending"]
    s.pending = None if p is None else Decision(
        p["player"], p["prompt"], tuple(Option(lbl, _from_json_value(v)) for lbl, v in p["options"]),
        p["kind"], p["secret"], _from_json_value(p["picked"]), p.get("help", ""), p.get("confirm", False),
        p.get("pass_index", -1), p.get("value_type", "any"))
    slot = data["pending_slot"]
    s.pending_slot = tuple(slot) if isinstance(slot, list) else slot
    s.result = data["result"]
    s.decisions = data["decisions"]
    s.chance = tuple(data.get("chance", ()))
    return s
