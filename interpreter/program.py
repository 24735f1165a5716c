"""The compiled program: what the compiler makes of a checked model, shared by every game.

A `Program` is immutable once built: tables of card data (kind, name, field values by card
id), the zone layout (which zone index belongs to which player), compiled procedures
(`CompiledProc`: a list of VM instructions plus a slot count), compiled triggers per
event, and the option values the program was compiled with. Running games only read it;
everything that changes is in `GameState`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CompiledProc:
    name: str
    kind: str
    nslots: int
    nparams: int
    code: list = field(default_factory=list)    # VM instructions (callables)
    spans: list = field(default_factory=list)   # source span of each instruction
    suspends: bool = True
    direct: object = None                       # for procs that never pause: a plain closure
    span: object = None
    runner: object = None                       # generated: runs the code until it must stop
    body: object = None                         # for procs that never pause: the body, (rt, L) -> signal


@dataclass
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


@dataclass
class Program:
    model: object
    options: dict
    max_players: int
    card_ids: list            # card id -> instance id text
    card_names: list          # card id -> display name
    card_kinds: list          # card id -> kind name
    card_fields: dict         # field name -> list indexed by card id
    card_defs: list           # card id -> CardDef
    card_by_id: dict          # instance id text -> card id
    face_fields: dict         # field name -> per card: {(side, turn): value} or None
    face_names: list | None   # per card: {(side, turn): display name} or None; None if no card has any
    zones: list               # of ZoneInfo, declaration order
    zone_names: list          # zone index -> "hand[2]" style name
    zone_owner: list          # zone index -> player or None
    zone_info: list           # zone index -> ZoneInfo
    nzones: int
    procs: dict               # name -> CompiledProc
    triggers: dict            # event name -> list of (cond closure|None, CompiledProc)
    var_defaults: dict        # scope -> list of default closures
    var_names: dict           # scope -> list of names
    fingerprint: str
    max_steps: int
    compiler: object = None   # compiles expressions written after loading (scenario checks)
    card_fingerprint: str = ""
    card_backs: list = None       # card id -> its back ("card" unless the data says otherwise)
    many_backs: bool = False      # do some cards look different face down?
    compact_family: list = None   # zone index -> (first, size) of its compacting row, or None
    has_compact: bool = False

    def evaluator(self):
        """The game's `func evaluate(p: player) -> int` as fn(rt, seat) -> number, or None.

        Games may declare it to guide the greedy bot and the design metrics (how well each
        player is doing at any moment); see docs/simulate.md.
        """
        func = self.model.funcs.get("evaluate")
        if func is None or len(func.params) != 1 or str(func.params[0][1]) != "player":
            return None
        cache = self.__dict__.setdefault("_evaluator", {})
        if "fn" not in cache:
            compiler = self.compiler
            body = compiler.func_body(func)[func.name]
            size = max(compiler.res.frame_sizes[func.decl], 1)

            def evaluate(rt, seat: int):
                return body(rt, [seat] + [None] * (size - 1))
            cache["fn"] = evaluate
        return cache["fn"]

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
