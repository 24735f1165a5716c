"""The engine API: one running game, in the spirit of OpenSpiel's State.

`Match` wraps a compiled `Program` and a `GameState`:
    decision / legal_options   what is being asked, of whom
    apply(index) / apply_label  answer it; the rules run on to the next decision
    is_over / result            the end and its ranking/scores
    observation(seat)           what one seat may see (see `observation.py`)
    snapshot() / restore()      cheap copies for search agents (no replay)
    to_json() / from_json()     save and resume exactly
    is_chance() / chance_outcomes() / sample_chance()
                                explicit chance (chance.py): random events as decisions
Events (log lines, moves, decisions) go to an optional sink, never into the state.
"""

from __future__ import annotations

from . import knowledge as K
from . import rng as R
from .chance import ChanceDraws, NeedChance
from .errors import IllegalMove, RulesRuntimeError
from .observation import decision_for, observe
from .runtime import Runtime
from .state import DONE, Frame, GameState, state_from_json, state_to_json

SAVE_FORMAT = 1

# `pending_slot` of a game whose variable defaults are still to be evaluated: with explicit
# chance they are part of the first stretch of rules (a default may roll a die).
DEFAULTS_PENDING = -2


class Match:
    def __init__(self, program, players: int | None = None, seed: int = 0, sink=None,
                 debug: bool = False, max_steps: int | None = None, _state: GameState | None = None,
                 breakpoint: tuple | None = None, hands: dict | None = None, coverage: dict | None = None,
                 on_move=None, knowledge: bool = True, explicit_chance: bool = False):
        model = program.model
        self.program = program
        self.players = players if players is not None else model.players[2]
        lo, hi, _ = model.players
        if not lo <= self.players <= hi:
            raise ValueError(f"{model.name.get('en', model.id)} is for {lo}" +
                             (f" to {hi}" if hi != lo else "") + f" players, not {self.players}")
        self.seed = seed
        self.sink = sink
        self.debug = debug
        self.explicit_chance = explicit_chance
        if _state is not None:
            self.state = _state
            self.rt = Runtime(program, self.state, self.players, sink, debug, max_steps)
            return
        self.state = self._initial_state(seed)
        self.rt = Runtime(program, self.state, self.players, sink, debug, max_steps, on_move, knowledge)
        self.rt.breakpoint = breakpoint     # e.g. ("game", 1): stop when setup is done
        self.rt.coverage = coverage
        if coverage is not None:
            for fr in self.state.frames:
                self.rt.covered(fr.proc.name)
        if explicit_chance:
            self.state.pending_slot = DEFAULTS_PENDING
        else:
            self._init_vars()
        self.hands = self._deal_hands(hands or {})
        if sink is not None:
            start = {"type": "start", "game": model.id, "seed": seed, "players": self.players,
                     "options": program.options, "variants": list(model.applied_variants),
                     "fingerprint": program.fingerprint, "cards": program.card_fingerprint,
                     "format": SAVE_FORMAT}
            if self.hands:
                start["hands"] = {str(s + 1): ids for s, ids in self.hands.items()}
            sink(start)
        self._run()

    # ------------------------------------------------------------------ set-up
    def _initial_state(self, seed: int) -> GameState:
        prog = self.program
        ncards = len(prog.card_ids)
        st = GameState.__new__(GameState)
        st.zones = [[] for _ in range(prog.nzones)]
        st.zones[prog.zone_index("box")] = list(range(ncards))
        st.where = [prog.zone_index("box")] * ncards
        st.faceup = [False] * ncards
        st.turn = [0] * ncards
        st.known = [0] * ncards         # the box: nobody knows where anything is yet
        st.gvars = [None] * len(prog.var_names["global"])
        st.pvars = [[None] * self.players for _ in prog.var_names["player"]]
        st.cvars = [[None] * ncards for _ in prog.var_names["card"]]
        st.rng = R.seed_state(seed)
        st.pending = None
        st.pending_slot = -1
        st.result = None
        st.decisions = 0
        st.chance = ()
        frames = []
        game = prog.procs["game"]
        frames.append(Frame(game, 0, [None] * game.nslots))
        if "setup" in prog.procs:
            setup = prog.procs["setup"]
            frames.append(Frame(setup, 0, [None] * setup.nslots))
        st.frames = frames
        return st

    def _deal_hands(self, given: dict) -> dict:
        """Put the cards each seat brings (`hands:` in the game file) into its zone, before setup.

        `given` maps 0-based seats to lists of card ids; other seats get their preset.
        """
        spec = self.program.model.hands
        if not spec:
            return {}
        prog, st = self.program, self.state
        hands = {}
        for seat in range(self.players):
            ids = given.get(seat)
            if ids is None:
                seats = spec["seats"]
                ids = spec["presets"].get(seats[seat]) if seat < len(seats) else None
            if ids is None:
                continue
            hands[seat] = list(ids)
            zone = prog.zone_index(spec["zone"], seat)
            for cid in ids:
                card = next((c for c, cd in enumerate(prog.card_defs)
                             if cd.id == cid and st.where[c] == prog.zone_index("box")), None)
                if card is None:
                    raise ValueError(f"seat {seat + 1}'s hand needs another `{cid}`, but every copy is taken")
                st.zones[st.where[card]].remove(card)
                st.zones[zone].append(card)
                st.where[card] = zone
                K.seen(prog, st, (card,))
        return hands

    def _init_vars(self) -> None:
        """Evaluate variable defaults (they may read options and `players`)."""
        prog, st, rt = self.program, self.state, self.rt
        for i, fn in enumerate(prog.var_defaults["global"]):
            st.gvars[i] = fn(rt, [None] * 8)
        for i, fn in enumerate(prog.var_defaults["player"]):
            value = fn(rt, [None] * 8)
            st.pvars[i] = [value] * self.players
        for i, fn in enumerate(prog.var_defaults["card"]):
            value = fn(rt, [None] * 8)
            st.cvars[i] = [value] * len(prog.card_ids)

    def _run(self) -> None:
        try:
            if self.explicit_chance:
                self._run_chance()
            else:
                self.rt.run()
        except RulesRuntimeError as exc:
            exc.seed = self.seed
            exc.decision = self.state.decisions
            raise

    def _run_chance(self) -> None:
        """Run the rules handing out the chance outcomes answered so far (chance.py). At a
        draw with no outcome yet, go back to the state the run started from and ask it; the
        events of the stretch are held back until it reaches a player's decision, the end or
        a breakpoint, so the log reads as with the generator (plus the chance records)."""
        rt, base = self.rt, self.state.copy()
        breakpoint, coverage = rt.breakpoint, dict(rt.coverage) if rt.coverage is not None else None
        sink, on_move = rt.sink, rt.on_move
        events: list = []
        moves: list = []
        if sink is not None:
            rt.sink = events.append
        if on_move is not None:
            rt.on_move = lambda c, src, to: moves.append((c, src, to))
        rt.chance = ChanceDraws(self.state.chance)
        try:
            if self.state.pending_slot == DEFAULTS_PENDING:
                self._init_vars()
                self.state.pending_slot = -1
            rt.run()
        except NeedChance as need:
            base.pending = need.decision
            self.state = rt.st = base
            rt.breakpoint, rt.paused, rt.queue = breakpoint, False, []
            if coverage is not None:
                rt.coverage.clear()
                rt.coverage.update(coverage)
            events = moves = []
        else:
            self.state.chance = ()
        finally:
            rt.sink, rt.on_move, rt.chance = sink, on_move, None
            for record in events:
                sink(record)
            for move in moves:
                on_move(*move)

    # ------------------------------------------------------------------ the API
    @property
    def decision(self):
        return self.state.pending

    @property
    def legal_options(self) -> list:
        d = self.state.pending
        return list(d.options) if d is not None else []

    @property
    def current_player(self) -> int | None:
        d = self.state.pending
        return d.player if d is not None else None

    @property
    def is_over(self) -> bool:
        return self.state.result is not None

    @property
    def result(self) -> dict | None:
        return self.state.result

    @property
    def decisions_made(self) -> int:
        return self.state.decisions

    def is_chance(self) -> bool:
        """Is the pending decision a random event's (explicit chance)?"""
        d = self.state.pending
        return d is not None and d.kind == "chance"

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(option index, probability) of each outcome of the pending chance decision."""
        if not self.is_chance():
            raise IllegalMove("the pending decision is not a chance decision" if self.state.pending is not None
                              else "no decision is pending")
        n = len(self.state.pending.options)
        return [(i, 1.0 / n) for i in range(n)]

    def sample_chance(self) -> int:
        """Answer the pending chance decision from the game's own generator, drawing as the
        game draws with explicit chance off (so the same seed plays the same game); returns
        the outcome's index."""
        n = len(self.chance_outcomes())
        index, self.state.rng = R.below(self.state.rng, n)
        self.apply(index)
        return index

    def apply(self, index: int) -> None:
        """Answer the pending decision with option `index` and run to the next one."""
        st = self.state
        d = st.pending
        if d is None:
            raise IllegalMove("no decision is pending" + (" (the game is over)" if self.is_over else ""))
        if not isinstance(index, int) or not 0 <= index < len(d.options):
            raise IllegalMove(f"option {index} does not exist; there are {len(d.options)} options")
        option = d.options[index]
        if d.kind == "chance":
            if self.sink is not None:
                self.sink({"type": "chance", "prompt": d.prompt, "choice": index, "label": option.label,
                           "outcomes": len(d.options)})
            st.pending = None
            st.chance = st.chance + (index,)
            return self._run()
        if self.sink is not None:
            self.sink({"type": "decision", "n": st.decisions + 1, "player": d.player + 1, "prompt": d.prompt,
                       "options": d.labels, "choice": index, "label": option.label, "secret": d.secret})
        st.decisions += 1
        st.pending = None
        fr = st.frames[-1]
        slot = st.pending_slot
        if d.kind == "choose_many":
            work, target = slot
            if option.value == DONE:
                # The choose_many instruction is still current (pc not advanced): finish it.
                if target >= 0:
                    fr.locals[target] = fr.locals[work]
                fr.pc += 1
            else:
                fr.locals[work] = fr.locals[work] + (option.value,)
        elif slot >= 0:
            fr.locals[slot] = option.value
        self._run()

    def apply_label(self, label: str) -> None:
        d = self.state.pending
        if d is None:
            raise IllegalMove("no decision is pending")
        for i, o in enumerate(d.options):
            if o.label == label:
                return self.apply(i)
        raise IllegalMove(f"'{label}' is not a legal option; legal are: " + ", ".join(d.labels))

    def observation(self, seat: int) -> dict:
        return observe(self, seat)

    def decision_for(self, seat: int):
        """The pending decision as `seat` may read it (labels never name hidden cards)."""
        return decision_for(self.program, self.state, self.state.pending, seat)

    # ------------------------------------------------------------------ stopping and editing
    @property
    def paused(self) -> bool:
        """True when the game stopped at a breakpoint (not at a decision)."""
        return self.rt.paused

    def run_to(self, proc_name: str, occurrence: int = 1) -> bool:
        """Let the rules run until they enter `proc_name` (a phase) for the n-th time from now.

        Only valid while no decision is pending; returns False if the game ended first.
        """
        self.rt.breakpoint = (proc_name, occurrence)
        self.resume()
        return self.rt.paused

    def stop_at(self, proc_name: str, occurrence: int = 1, end: bool = False) -> None:
        """Stop the rules the n-th time from now they enter phase `proc_name` (or, with `end`,
        as it returns, before whatever follows it runs); `apply` or `resume` then run only
        that far unless a decision comes first (`paused` tells which). `clear_stop` forgets it."""
        self.rt.breakpoint = (proc_name, occurrence) + (("end",) if end else ())

    def clear_stop(self) -> None:
        self.rt.breakpoint = None

    def resume(self) -> None:
        """Continue after a breakpoint (or after the state was edited at one)."""
        self.rt.paused = False
        if self.state.pending is None and self.state.result is None:
            self._run()

    def current_phases(self) -> list[str]:
        """Names of the phases being played, outermost first."""
        return [f.proc.name for f in self.state.frames if f.proc.kind == "phase"]

    def reoffer(self) -> None:
        """Recompute the pending decision after the state was edited (re-run its instruction)."""
        st = self.state
        if st.pending is None:
            return
        fr = st.frames[-1]
        if st.pending.kind == "choose":
            fr.pc -= 1
        st.pending = None
        self._run()

    def place(self, zone: int, cards: list[int], faces: dict | None = None, turns: dict | None = None,
              spill: int | None = None) -> None:
        """Put exactly `cards` (in order, bottom/left first) in `zone`.

        Cards taken from elsewhere leave their zones; cards that were in `zone` and are not
        listed go to `spill` (the box by default), so no card is ever lost.
        """
        st, prog = self.state, self.program
        spill = prog.zone_index("box") if spill is None else spill
        leftover = [c for c in st.zones[zone] if c not in cards]
        for c in cards:
            st.zones[st.where[c]].remove(c)
        for c in leftover:
            st.zones[zone].remove(c)
            st.zones[spill].append(c)
            st.where[c] = spill
        st.zones[zone][:0] = []
        st.zones[zone].extend(cards)
        for c in cards:
            st.where[c] = zone
        for c, up in (faces or {}).items():
            st.faceup[c] = up
        for c, deg in (turns or {}).items():
            st.turn[c] = deg % 360
        K.seen(prog, st, cards + leftover)
        family = prog.compact_family[zone]
        if family is not None:
            self.rt.compact(*family)

    # ------------------------------------------------------------------ copies
    def snapshot(self) -> GameState:
        return self.state.copy()

    def restore(self, snap: GameState) -> None:
        self.state = snap.copy()
        self.rt.st = self.state

    def clone(self, sink=None) -> "Match":
        """An independent copy of this game (for search), with its own sink."""
        m = Match.__new__(Match)
        m.program = self.program
        m.players = self.players
        m.seed = self.seed
        m.sink = sink
        m.debug = self.debug
        m.explicit_chance = self.explicit_chance
        m.state = self.state.copy()
        m.rt = Runtime(self.program, m.state, self.players, sink, self.debug, self.rt.max_steps,
                       knowledge=self.rt.tracks)
        return m

    def with_state(self, state: GameState, sink=None, max_steps: int | None = None, knowledge: bool = False) -> "Match":
        """A match of the same game around another state (a search agent's sample); it keeps
        no knowledge as it plays on unless asked (a playout's is never read)."""
        m = Match.__new__(Match)
        m.program = self.program
        m.players = self.players
        m.seed = self.seed
        m.sink = sink
        m.debug = False
        m.explicit_chance = False
        m.hands = getattr(self, "hands", {})
        m.state = state
        m.rt = Runtime(self.program, state, self.players, sink, False, max_steps or self.rt.max_steps,
                       knowledge=knowledge)
        return m

    def to_json(self) -> dict:
        data = {"format": SAVE_FORMAT, "game": self.program.model.id, "fingerprint": self.program.fingerprint,
                "players": self.players, "seed": self.seed, "options": self.program.options,
                "variants": list(self.program.model.applied_variants), "state": state_to_json(self.state)}
        if self.explicit_chance:
            data["explicit_chance"] = True
        return data

    @classmethod
    def from_json(cls, program, data: dict, sink=None, debug: bool = False) -> "Match":
        if data.get("fingerprint") != program.fingerprint:
            raise ValueError("the saved game was made with different game files (rules, cards or options)")
        st = state_from_json(data["state"], program.procs)
        return cls(program, data["players"], data["seed"], sink, debug, _state=st,
                   explicit_chance=bool(data.get("explicit_chance", False)))

