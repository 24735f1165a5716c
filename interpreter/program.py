"""The compiled program: what the compiler makes of a checked model, shared by every game
(pipeline: compiled program -> running game).

A `Program` is frozen: tables of card data (kind, name, field values by card id), the zone
layout (which zone index belongs to which player), compiled procedures (`CompiledProc`),
compiled triggers per event, variable defaults, the computed fields (formulas) and the
evaluator, and the option values the program was compiled with. Running games only read
it; everything that changes is in `GameState`. Nothing here refers back to the compiler:
a program needs no compiler at run time.
"""

from __future__ import annotations

from dataclasses import dataclass


class CompiledProc:
    """One procedure, phase, ability or trigger: its entry points and frame size.

    Built in two steps (a procedure's code may call itself, so its object exists before its
    code) and then sealed: from then on it cannot change.
    """
    __slots__ = ("name", "kind", "nslots", "nparams", "spans", "suspends", "direct", "span", "runner", "body",
                 "_sealed")

    def __init__(self, name: str, kind: str, nparams: int, span=None):
        self._sealed = False
        self.name = name
        self.kind = kind
        self.nslots = nparams
        self.nparams = nparams
        self.spans: tuple = ()        # the source span of each instruction (pc -> span), for errors
        self.suspends = True          # may pause: runs in a frame of its own
        self.direct = None            # never pauses: fn(rt, args) -> value, run at once
        self.span = span
        self.runner = None            # fn(rt, frame): runs the frame from its pc until it must stop
        self.body = None              # never pauses: fn(rt, L) -> signal, the body without the call's bookkeeping

    def __setattr__(self, name, value):
        if getattr(self, "_sealed", False):
            raise AttributeError(f"compiled procedure `{self.name}` is read-only")
        object.__setattr__(self, name, value)

    def seal(self) -> None:
        object.__setattr__(self, "_sealed", True)

    def __repr__(self) -> str:
        return f"CompiledProc({self.name!r}, {self.kind!r})"


@dataclass(frozen=True)
class ZoneInfo:
    name: str
    per_player: bool
    ordered: bool
    hidden: bool
    visible: str
    facedown_visible: str
    arrive_face: str | None
    base: int          # first zone index
    dims: tuple = ()   # sizes of an indexed family: (n,) or (cols, rows)
    size: int = 1      # zones per player (or in all, if shared)
    compact: bool = False


@dataclass(frozen=True, eq=False)
class Tables:
    """The program's data, built from the model before any code: cards and zones."""
    model: object
    options: dict
    max_players: int
    card_ids: tuple           # card id -> instance id text
    card_names: tuple         # card id -> display name
    card_kinds: tuple         # card id -> kind name
    card_fields: dict         # field name -> tuple indexed by card id
    card_defs: tuple          # card id -> CardDef
    card_by_id: dict          # instance id text -> card id
    face_fields: dict         # field name -> per card: {(side, turn): value} or None
    face_names: tuple | None  # per card: {(side, turn): display name} or None; None if no card has any
    zones: tuple              # of ZoneInfo, declaration order
    zone_names: tuple         # zone index -> "hand[2]" style name
    zone_owner: tuple         # zone index -> player or None
    zone_info: tuple          # zone index -> ZoneInfo
    nzones: int
    fingerprint: str
    max_steps: int
    card_fingerprint: str
    card_backs: tuple         # card id -> its back ("card" unless the data says otherwise)
    many_backs: bool          # do some cards look different face down?
    compact_family: tuple     # zone index -> (first, size) of its compacting row, or None
    has_compact: bool
    # What seats see, as bitmasks of seats (bit s = seat s), for knowledge.py: per zone, who
    # sees a card lying face up / face down there; whether the table can tell which card
    # leaves it (not a zone only its owner sees); per card, whether it has a readable back.
    see_up: tuple
    see_down: tuple
    everyone: int             # the mask of every seat the game may have
    follows: tuple
    card_backed: tuple
    tracks_knowledge: bool    # is any card ever out of some seat's sight?

    def display_name(self, st, card: int) -> str:
        """The card's name as it lies now (a card may name each orientation differently)."""
        if self.face_names is not None:
            names = self.face_names[card]
            if names:
                has_back = any(side == 1 for side, _ in self.card_defs[card].faces)
                side = 0 if st.faceup[card] or not has_back else 1
                for key in ((side, st.turn[card]), (side, None)):
                    if key in names:
                        return names[key]
        return self.card_names[card]

    def zone_index(self, name: str, player: int | None = None, *index: int) -> int:
        for z in self.zones:
            if z.name == name:
                k = (player if z.per_player else 0) * z.size
                if len(index) == 1:
                    k += index[0]
                elif len(index) == 2:
                    k += index[1] * z.dims[0] + index[0]
                return z.base + k
        raise KeyError(name)


@dataclass(frozen=True, eq=False)
class Program(Tables):
    """Tables plus compiled code: everything a running game reads, nothing it writes."""
    procs: dict               # name -> CompiledProc
    triggers: dict            # event name -> tuple of (cond fn(rt, L) | None, CompiledProc)
    var_defaults: dict        # scope -> tuple of default fns(rt, L)
    var_names: dict           # scope -> tuple of names
    formulas: dict            # field name -> per card: fn(rt, card) computing its value, or None
    evaluate: object          # fn(rt, seat) -> number from the game's `func evaluate(p)`, or None
    sources: tuple            # the generated Python source of every function (for debugging)

    def evaluator(self):
        """The game's `func evaluate(p: player) -> int` as fn(rt, seat) -> number, or None.

        Games may declare it to guide the greedy bot and the design metrics (how well each
        player is doing at any moment); see docs/simulate.md.
        """
        return self.evaluate
