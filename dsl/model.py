"""The checked game model (pipeline step: AST -> **checked model**).

`GameModel` is what the checker hands to the compiler: every declaration of the rules with
its resolved type, the game file's metadata and cards, and side tables (`Resolution`)
recording what each name, attribute and call in the AST refers to and the static type of
every expression. Nothing here runs; the interpreter compiles this model into closures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A
from .diagnostics import Span
from .types import Type


@dataclass(frozen=True)
class FieldDef:
    name: str
    type: Type
    default: object          # a constant value, or None
    has_default: bool
    span: Span


@dataclass(frozen=True)
class KindDef:
    name: str
    fields: dict             # name -> FieldDef
    span: Span


@dataclass(frozen=True)
class ZoneDef:
    name: str
    index: int               # declaration order (the built-in box is 0)
    per_player: bool
    ordered: bool
    hidden: bool             # only counts are visible
    visible: str             # who sees face-up cards: "all", "owner", "none"
    facedown_visible: str    # who also sees face-down cards: "none", "owner", "all"
    arrive_face: str | None  # "up", "down" or None (keep)
    span: Span
    dims: tuple = ()         # `indexed(n)` or `indexed(cols, rows)`: a family of zones
    compact: bool = False    # empty zones of the family close up to the left at once

    @property
    def call_params(self) -> list[str]:
        """What `name(...)` takes: a player if per player, then one index per dimension."""
        return (["player"] if self.per_player else []) + ["index"] * len(self.dims)


@dataclass(frozen=True)
class VarDef:
    name: str
    index: int
    scope: str               # "global", "player", "card"
    type: Type
    default: A.Expr
    visible: str             # "all" or "owner"
    span: Span


@dataclass(frozen=True)
class OptionDef:
    name: str
    type: Type
    default: object
    doc: str
    range: tuple | None
    choices: tuple | None
    span: Span


@dataclass(frozen=True)
class EventDef:
    name: str
    params: tuple            # of (name, Type)
    builtin: bool
    span: Span


@dataclass(frozen=True)
class ProcDef:
    name: str
    kind: str                # "proc", "phase", "ability", "setup", "game", "trigger", "snippet"
    params: tuple            # of (name, Type)
    returns: Type | None
    decl: A.ProcDecl
    span: Span


@dataclass(frozen=True)
class FuncDef:
    name: str
    params: tuple
    returns: Type
    decl: A.FuncDecl
    span: Span


@dataclass(frozen=True)
class TriggerDef:
    index: int
    event: str
    proc: ProcDef            # body compiled as a procedure with the event's parameters
    cond: A.Expr | None
    span: Span


@dataclass(frozen=True, eq=False)
class Formula:
    """A card field computed by an expression (`power: {rules: "..."}`), with `self` and `you`."""
    expr: object
    nslots: int
    text: str


@dataclass(frozen=True)
class CardDef:
    """One card entry of the data: `count` physical copies share it."""
    id: str
    kind: str
    name: dict               # language -> text
    fields: dict             # field name -> value (defaults filled in)
    count: int
    source: str              # the file the entry came from
    span: Span
    faces: dict = field(default_factory=dict)   # (side 0/1, turn) -> {field: value} by orientation
    back: str = "card"                          # cards with the same back look alike face down
    image: str | None = None                    # a picture of the face (path relative to `source`)
    text: dict = field(default_factory=dict)    # language -> rule text, placeholders filled in (dsl/card_text.py)

    @property
    def instance_ids(self) -> list[str]:
        if self.count == 1:
            return [self.id]
        return [f"{self.id}#{i}" for i in range(1, self.count + 1)]


@dataclass
class Resolution:
    """Side tables filled by the checker, keyed by AST node (nodes compare by identity)."""
    types: dict = field(default_factory=dict)      # Expr -> Type
    names: dict = field(default_factory=dict)      # Name -> (kind, detail)
    attrs: dict = field(default_factory=dict)      # Attr -> (kind, detail)
    calls: dict = field(default_factory=dict)      # Call -> (kind, name, normalized args)
    slots: dict = field(default_factory=dict)      # Let/For/Comprehension/Lambda -> slot
    targets: dict = field(default_factory=dict)    # Assign -> (kind, detail)
    frame_sizes: dict = field(default_factory=dict)  # ProcDecl/FuncDecl -> number of slots


@dataclass
class GameModel:
    id: str
    name: dict
    description: dict
    players: tuple           # (min, max, default)
    path: str                # the game file
    rules_files: list
    options: dict            # name -> OptionDef
    kinds: dict              # name -> KindDef
    field_types: dict        # field name -> Type (one type per name across kinds)
    zones: dict              # name -> ZoneDef
    vars: dict               # name -> VarDef (all scopes)
    events: dict
    procs: dict              # name -> ProcDef (procs, phases, abilities, setup, game)
    funcs: dict
    triggers: list
    cards: list              # of CardDef
    resolution: Resolution
    variants: dict = field(default_factory=dict)    # name -> path
    applied_variants: list = field(default_factory=list)
    layout: dict = field(default_factory=dict)
    max_steps: int = 1_000_000
    sources: dict = field(default_factory=dict)     # file -> text (for error rendering)
    fingerprint: str = ""
    warnings: list = field(default_factory=list)
    checker: object = None                          # to check expressions written later (scenarios)
    option_overrides: dict = field(default_factory=dict)   # option values set by the applied variants
    variant_specs: list = field(default_factory=list)      # the applied variants (for `rulesvm diff`)
    rules_ast: list = field(default_factory=list)          # the rules files after variants
    hands: dict | None = None   # {zone, size, unique, presets, seats}: cards players bring
    bots: dict = field(default_factory=dict)   # {playout}: how the built-in bots play this game

    def vars_of(self, scope: str) -> list[VarDef]:
        return sorted((v for v in self.vars.values() if v.scope == scope), key=lambda v: v.index)

    @property
    def card_count(self) -> int:
        return sum(c.count for c in self.cards)
