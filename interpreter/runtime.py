"""The virtual machine that runs a compiled program on a game state (pipeline: running game).

`Runtime` pairs the immutable `Program` with one mutable `GameState`. Its `run()` executes
VM instructions of the top frame until the rules ask for a decision or the game ends; the
continuation is the frame stack in the state, so a paused game can be copied or saved at
any decision. Compiled closures call back into the runtime for the effects every game
shares: moving cards (and firing `moved` triggers), shuffling, rolling, logging.
"""

from __future__ import annotations

from . import errors as E
from . import knowledge as K
from . import rng as R
from .chance import numbered
from .errors import MAX_CALL_DEPTH, RulesRuntimeError
from .limits import checked_written
from .state import Frame, Option

BREAK = 1
CONTINUE = 2


class GameOver(Exception):
    """Raised by `end_game` once the result is set: unwinds whatever rules are running,
    however deeply called, to `Runtime.run` (nothing after `end_game` runs)."""


class Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Runtime:
    __slots__ = ("prog", "st", "n", "sink", "on_move", "slow_moves", "plain_moves", "steps", "max_steps", "queue", "debug",
                 "has_moved_triggers", "tracks",
                 "breakpoint", "paused", "coverage", "halt", "players", "depth", "chance")

    def __init__(self, prog, st, nplayers: int, sink=None, debug: bool = False, max_steps: int | None = None,
                 on_move=None, knowledge: bool = True):
        self.prog = prog
        self.st = st
        self.n = nplayers
        self.players = tuple(range(nplayers))     # the value of `players`, shared (tuples are immutable)
        self.depth = 0            # calls running inside each other (limits.MAX_CALL_DEPTH)
        self.sink = sink
        # A watcher of card moves (card, from zone, to zone), cheaper than a sink of every
        # event: statistics that count moves need no log text or event records.
        self.on_move = on_move
        # Generated code moves a card itself (actions._move_source) unless events are written.
        self.slow_moves = sink is not None
        self.steps = 0
        self.max_steps = max_steps or prog.max_steps
        self.queue = []
        self.debug = debug
        self.has_moved_triggers = "moved" in prog.triggers
        # Keep what each seat knows (knowledge.py), unless nobody will read it (a search's
        # playouts, a simulation of random bots).
        self.tracks = prog.tracks_knowledge and knowledge
        # Nobody keeps knowledge or watches moves: a move of generated code only changes lists.
        # (on_move may be swapped for another watcher, never set or unset once running.)
        self.plain_moves = not self.tracks and on_move is None
        self.breakpoint = None    # (procedure name, occurrences left[, "end"]) or None: stop at its entry (or exit)
        self.paused = False
        self.coverage = None      # {rule name: times entered} when a simulation measures it
        self.halt = False         # set by whatever must interrupt the run loop (a decision, the end,
                                  # queued triggers, a breakpoint, the last frame returning)
        # Explicit chance (chance.py): while the engine runs the rules, the outcomes to hand
        # out instead of drawing from the generator; None when the generator draws.
        self.chance = None

    def covered(self, name: str) -> None:
        self.coverage[name] = self.coverage.get(name, 0) + 1

    def check_breakpoint(self, proc, ending: bool = False) -> None:
        """Pause at the entry of a procedure named by the breakpoint (its n-th entry), or as it
        returns (`ending`) when the breakpoint is at its end."""
        name, left = self.breakpoint[:2]
        if proc.name == name and ending == (len(self.breakpoint) > 2):
            if left <= 1:
                self.breakpoint = None
                self.paused = True
                self.halt = True
            else:
                self.breakpoint = (name, left - 1) + self.breakpoint[2:]

    # ------------------------------------------------------------------ effects
    def emit(self, record: dict) -> None:
        if self.sink is not None:
            self.sink(record)

    def log(self, text: str, to=None) -> None:
        if self.sink is not None:
            self.sink({"type": "log", "text": text, "to": None if to is None else to + 1})

    def move(self, cards, to: int, bottom: bool, face: str, anywhere: bool = False) -> None:
        """Move cards (a list, in order) to zone `to`; they keep their order there. `anywhere`:
        at a random position of the zone, drawn once the cards have left where they were."""
        st = self.st
        zones, where, faceup = st.zones, st.where, st.faceup
        if face == "keep":
            face = self.prog.zone_info[to].arrive_face or "keep"
        dest = zones[to]
        moved_from = []
        was_up = [faceup[c] for c in cards] if self.tracks else None
        for c in cards:
            src = where[c]
            zones[src].remove(c)
            moved_from.append(src)
        if anywhere:
            if self.chance is None:
                k = self.below(len(dest) + 1)
            else:
                size = len(dest)
                # Outcome k puts the cards under the top size - k cards (the label says how many).
                zone = self.prog.zone_names[to]
                k = self.chance.draw(size + 1, f"shuffle_into({zone})", f"shuffle into {zone}: cards above",
                                     lambda: numbered(range(size + 1), lambda k: str(size - k)), "int")
            dest[k:k] = cards
        elif bottom:
            dest[0:0] = cards
        else:
            dest.extend(cards)
        for c in cards:
            where[c] = to
            if face == "up":
                faceup[c] = True
            elif face == "down":
                faceup[c] = False
        if was_up is not None:
            for c, src, up in zip(cards, moved_from, was_up):
                if anywhere:
                    K.lost_place(self.prog, st, c)
                else:
                    K.moved(self.prog, st, c, src, up)
        if self.on_move is not None:
            for c, src in zip(cards, moved_from):
                self.on_move(c, src, to)
        if self.sink is not None and cards:
            names = self.prog.zone_names
            self.sink({"type": "move", "cards": [self.prog.card_ids[c] for c in cards],
                       "from": [names[z] for z in moved_from], "to": names[to],
                       "at": "random" if anywhere else "bottom" if bottom else "top"})
        if self.prog.has_compact:
            families = self.prog.compact_family
            if families[to] is not None or any(families[z] is not None for z in moved_from):
                for fam in {families[z] for z in [to, *moved_from] if families[z] is not None}:
                    self.compact(*fam)
        if self.has_moved_triggers:
            for c, src in zip(cards, moved_from):
                self.fire("moved", (c, src, to))

    def move_card(self, to: int, c, bottom: bool, face: str, span) -> None:
        """Move one card (none: nothing happens) to zone `to`: `move` of a single card, with
        the common case (no listener, no trigger, no compacting row) made cheap."""
        if to is None:
            raise E.move_to_none(span)
        if c is None:
            return
        if self.sink is not None or self.has_moved_triggers or self.prog.has_compact:
            return self.move([c], to, bottom, face)    # events and compaction: the general path
        st = self.st
        where = st.where
        src = where[c]
        st.zones[src].remove(c)
        if bottom:
            st.zones[to].insert(0, c)
        else:
            st.zones[to].append(c)
        where[c] = to
        if face == "keep":
            face = self.prog.zone_info[to].arrive_face
        faceup = st.faceup
        up = faceup[c]
        if face == "up":
            faceup[c] = True
        elif face == "down":
            faceup[c] = False
        if self.plain_moves:
            return
        if self.tracks:
            K.moved(self.prog, st, c, src, up)
        if self.on_move is not None:
            self.on_move(c, src, to)

    def move_zone(self, to: int, src: int, bottom: bool, face: str, span) -> None:
        """Move every card of zone `src` to zone `to`, keeping their order: `move` of a zone,
        with the common case (no listener, no trigger, no compacting row) made cheap."""
        if to is None:
            raise E.move_to_none(span)
        st = self.st
        cards = st.zones[src]
        if self.sink is not None or self.has_moved_triggers or self.prog.has_compact or src == to:
            return self.move(list(cards), to, bottom, face)
        if not cards:
            return
        st.zones[src] = []
        dest = st.zones[to]
        if bottom:
            dest[0:0] = cards
        else:
            dest.extend(cards)
        where = st.where
        for c in cards:
            where[c] = to
        if face == "keep":
            face = self.prog.zone_info[to].arrive_face
        if self.tracks:
            K.zone_moved(self.prog, st, cards, src, to, face)
        if face is not None and face != "keep":
            faceup, up = st.faceup, face == "up"
            for c in cards:
                faceup[c] = up
        if self.on_move is not None:
            for c in cards:
                self.on_move(c, src, to)

    def compact(self, first: int, size: int) -> None:
        """Close up a compacting row of zones: non-empty zones move left, keeping their order."""
        zones, where = self.st.zones, self.st.where
        piles = [zones[first + k] for k in range(size) if zones[first + k]]
        if all(zones[first + k] for k in range(len(piles))):
            return                      # already compact
        for k in range(size):
            zones[first + k] = piles[k] if k < len(piles) else []
            for c in zones[first + k]:
                where[c] = first + k
        if self.sink is not None:
            self.sink({"type": "compact", "zone": self.prog.zone_names[first].split("(")[0]})

    def fire(self, event: str, args: tuple) -> None:
        """Queue the triggers of an event whose condition holds; they run after this statement."""
        triggers = self.prog.triggers.get(event)
        if self.sink is not None and event not in ("moved",):
            self.sink({"type": "event", "event": event, "args": [a if not isinstance(a, tuple) else list(checked_written(a))
                                                                 for a in args]})
        if not triggers:
            return
        for cond, proc in triggers:
            locals_ = [None] * proc.nslots
            locals_[:len(args)] = args[:proc.nparams] if proc.nparams <= len(args) else args
            if cond is None or cond(self, locals_):
                self.queue.append(Frame(proc, 0, locals_))
                self.halt = True
                if self.coverage is not None:
                    self.covered(proc.name)

    def below(self, n: int) -> int:
        value, self.st.rng = R.below(self.st.rng, n)
        return value

    def roll(self, sides: int) -> int:
        """A die roll from 1 to `sides`: from the generator, or the next chance outcome."""
        if self.chance is None:
            return self.below(sides) + 1
        return self.chance.draw(sides, f"roll({sides})", f"roll a {sides}-sided die",
                                lambda: numbered(range(1, sides + 1)), "int") + 1

    def pick(self, seq, text, value_type: str):
        """One item of `seq` (not empty) at random; `text(item, rt)` labels a chance outcome."""
        if self.chance is None:
            return seq[self.below(len(seq))]
        return seq[self.chance.draw(len(seq), "random_pick", "pick at random",
                                    lambda: numbered(seq, lambda v: text(v, self)), value_type)]

    def shuffle_zone(self, z: int) -> None:
        if self.chance is None:
            self.st.rng = R.shuffle(self.st.zones[z], self.st.rng)
        else:
            self._chance_shuffle(self.st.zones[z], self.prog.zone_names[z])
        if self.tracks:
            for c in self.st.zones[z]:
                K.lost_place(self.prog, self.st, c)
        if self.sink is not None:
            self.sink({"type": "shuffle", "zone": self.prog.zone_names[z]})

    def _chance_shuffle(self, items: list, zone: str) -> None:
        """Fisher-Yates as `rng.shuffle` does it, each position's card a chance outcome: the
        top card first (the end of the list), then the one under it, ..."""
        prog, st = self.prog, self.st
        size = len(items)
        for i in range(size - 1, 0, -1):
            j = self.chance.draw(i + 1, f"shuffle({zone})", f"shuffle {zone}: card {size - i} from the top",
                                 lambda: [Option(prog.display_name(st, c), c) for c in items[:i + 1]], "card")
            items[i], items[j] = items[j], items[i]

    def tick(self, span, rule: str) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise E.runaway(self.max_steps, span, rule)

    # ------------------------------------------------------------------ the VM
    def run(self) -> None:
        """Execute until a decision is pending or the game is over.

        The inner loop runs one frame's instructions back to back; anything that changes the
        frame stack or must interrupt (a call, a return, a decision, the end, queued
        triggers, a breakpoint) sets `halt`, and the outer loop sorts it out.
        """
        st = self.st
        frames = st.frames
        self.steps = 0
        self.halt = False
        self.depth = 0            # a pause never happens inside a call that counts
        bottom = frames[0].proc if frames else None
        try:
            while frames:
                fr = frames[-1]
                fr.proc.runner(self, fr)        # returns when it must stop
                self.halt = False
                if self.queue:
                    self._flush_triggers()
                if st.pending is not None or st.result is not None or self.paused:
                    break
            else:
                if st.result is None and not self.paused:
                    # Point at the block's last statement: that is where the game ran out.
                    span = bottom.spans[-1] if bottom is not None and bottom.spans else None
                    raise E.no_end_game(span)
        except GameOver:
            if self.queue:
                self._flush_triggers()
        except Exception as exc:
            fr = frames[-1] if frames else None
            err = as_rules_error(exc, fr.proc.spans[fr.pc] if fr else None, _rule_name(fr.proc) if fr else None)
            if err is exc:
                raise
            raise err from exc
        if self.debug:
            self.check_cards()

    def _flush_triggers(self) -> None:
        queued = self.queue
        self.queue = []
        # The first trigger queued runs first: push in reverse.
        for frame in reversed(queued):
            self.st.frames.append(frame)

    def check_cards(self) -> None:
        """Debug mode: every card is in exactly one zone, and `where` agrees."""
        st = self.st
        seen = [0] * len(st.where)
        for z, cards in enumerate(st.zones):
            for c in cards:
                seen[c] += 1
                if st.where[c] != z:
                    raise E.card_misplaced(f"card {self.prog.card_ids[c]} is in {self.prog.zone_names[z]} "
                                       f"but recorded in {self.prog.zone_names[st.where[c]]}")
        for c, k in enumerate(seen):
            if k != 1:
                raise E.card_misplaced(f"card {self.prog.card_ids[c]} is in {k} zones (lost or duplicated)")


# ---------------------------------------------------------------------- what compiled code calls

def return_from(rt, fr, value) -> None:
    """Pop frame `fr`, handing `value` to its caller's return slot."""
    frames = rt.st.frames
    frames.pop()
    rt.halt = True
    if fr.ret_slot >= 0 and frames:
        frames[-1].locals[fr.ret_slot] = value
    if rt.breakpoint is not None:
        if fr.proc.kind == "setup":
            rt.check_breakpoint(frames[-1].proc if frames else fr.proc)
        elif fr.proc.kind == "phase":
            rt.check_breakpoint(fr.proc, ending=True)


def forced(rt, d) -> None:
    """Tell the listener that a decision with one option was taken without asking."""
    rt.sink({"type": "forced", "player": d.player + 1, "prompt": d.prompt,
             "label": d.options[0].label, "secret": d.secret})


def skipped(rt, d) -> None:
    """Tell the listener that a choice with nothing to offer was not asked, and why
    (`unavailable:`). Only people are told: logs and replays leave these records out
    (`PERSON_ONLY`), so a game's log is the same with or without the reason."""
    rt.sink({"type": "skipped", "player": d.player + 1, "prompt": d.prompt, "reason": d.reason,
             "secret": d.secret})


# Records told to the people at a table, never written to a log nor checked by a replay.
PERSON_ONLY = frozenset({"skipped"})


def in_simultaneous(rt) -> bool:
    """Is a decision made now inside a `simultaneous` loop (so secret)?"""
    for f in rt.st.frames:
        if f.secret:
            return True
    return False


def count_entry(name: str) -> str:
    """Generated code's line for `rt.covered(name)` (`name`: Python source), written out: a
    simulation counts every rule entry, and a call per entry cost it 4% of a game."""
    return f"if rt.coverage is not None: rt.coverage[{name}] = rt.coverage.get({name}, 0) + 1"


def direct_entry(name: str, span, rule: str, body, nslots: int):
    """A never-pausing procedure's entry fn(rt, args) -> value: counts coverage and depth,
    gives the body a frame list of its own, unwraps `return`."""
    def direct(rt, args):
        if rt.coverage is not None:
            rt.covered(name)
        rt.depth += 1
        if rt.depth > MAX_CALL_DEPTH:
            raise E.too_deep(span, rule)
        L = list(args) + [None] * (nslots - len(args))
        r = body(rt, L)
        rt.depth -= 1
        if r is not None and r.__class__ is Return:
            return r.value
        return None
    return direct


def family_zone(base: int, i, n: int, name: str, span) -> int:
    """The zone index of `name(i)` in a family of n zones starting at `base`, bounds checked."""
    if i is None:
        raise E.zone_of_none(name, span)
    if not 0 <= i < n:
        raise E.no_such_zone(name, i, n, span)
    return base + i


def grid_zone(base: int, col, row, dims: tuple, name: str, span) -> int:
    """The zone index of `name(col, row)` in a grid starting at `base`, bounds checked."""
    if col is None or row is None:
        raise E.zone_of_none(name, span)
    if not (0 <= col < dims[0] and 0 <= row < dims[1]):
        raise E.no_such_cell(name, col, row, dims, span)
    return base + row * dims[0] + col


def zone_item(cards: list, i: int, span):
    """Card `i` of a zone's list (negative: from the end), or R009."""
    if not -len(cards) <= i < len(cards):
        raise E.index_outside(i, len(cards), "zone", span)
    return cards[i]


def list_item(seq, i: int, span):
    """Item `i` of a list or tuple (negative: from the end), or R009."""
    if seq is None:
        raise E.index_of_none(span)
    if not -len(seq) <= i < len(seq):
        raise E.index_outside(i, len(seq), "list", span)
    return seq[i]


def as_rules_error(exc: Exception, span, rule: str | None) -> Exception:
    """The rules' own error for a failure while rules ran, at `span` in `rule` when it has no
    position of its own; anything that is not the rules' fault is returned unchanged."""
    if isinstance(exc, RulesRuntimeError):
        if exc.span is None:
            exc.span = span
        if exc.rule is None:
            exc.rule = rule
        return exc
    if isinstance(exc, RecursionError):
        return E.python_recursion(span, rule)
    if isinstance(exc, MemoryError):
        return E.out_of_memory(span, rule)
    if isinstance(exc, (TypeError, IndexError, ValueError, ZeroDivisionError, KeyError, AttributeError)):
        return E.impossible(_explain(exc), span, rule)
    return exc


def rule_name(kind: str, name: str) -> str:
    """How an error names a rule: "phase `fight`", "the game block", ..."""
    return {"phase": "phase", "ability": "ability", "snippet": "card ability", "trigger": "trigger",
            "setup": "the setup block", "game": "the game block"}.get(kind, "procedure") + \
        ("" if kind in ("setup", "game") else f" `{name}`")


def _rule_name(proc) -> str:
    return rule_name(proc.kind, proc.name)


def _explain(exc: Exception) -> str:
    text = str(exc)
    if isinstance(exc, IndexError):
        return "index out of range (past the end of a list or zone)"
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if "NoneType" in text:
        return "a value is `none` where the rules need a card, player or number"
    return f"impossible operation: {text}"
