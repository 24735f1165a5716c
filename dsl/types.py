"""The static types of the rules language, used by the checker (AST -> checked model).

Values at run time are plain Python values: ints, bools, strs, tuples, and ints standing
for cards, players and zones. The checker gives every expression one of these types so
that mistakes (adding a card to a number, a zone where a player is expected) are reported
before a game runs. `none` fits any type; `any` switches checking off for one value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Type:
    name: str
    elem: "Type | None" = None          # list element type
    items: tuple = ()                   # tuple item types
    result: "Type | None" = None        # lambda result type

    def __str__(self) -> str:
        if self.name == "list":
            return f"list[{self.elem}]"
        if self.name == "tuple":
            return "(" + ", ".join(str(t) for t in self.items) + ")"
        if self.name == "lambda":
            return f"{self.elem} => {self.result}"
        return self.name


INT = Type("int")
BOOL = Type("bool")
TEXT = Type("text")
CARD = Type("card")
PLAYER = Type("player")
ZONE = Type("zone")
NONE = Type("none")
ANY = Type("any")
ABILITY = Type("ability")
VOID = Type("void")     # what a statement-only primitive returns
T = Type("T")           # the one type variable primitives use
K = Type("K")           # a second one, for sort keys
E = Type("E")           # an item of a T that is a list (`choose`'s `step_label:` reads one pick)


def list_of(elem: Type) -> Type:
    return Type("list", elem)


def tuple_of(*items: Type) -> Type:
    return Type("tuple", items=tuple(items))


def lambda_of(param: Type, result: Type) -> Type:
    return Type("lambda", param, result=result)


CARDS = list_of(CARD)
PLAYERS = list_of(PLAYER)
INTS = list_of(INT)

SIMPLE = {"int": INT, "bool": BOOL, "text": TEXT, "card": CARD, "player": PLAYER,
          "zone": ZONE, "any": ANY, "ability": ABILITY}


def is_listish(t: Type) -> bool:
    return t.name in ("list", "any", "none") or t == ZONE


def elem_of(t: Type) -> Type:
    """Element type when iterating over a value of type t."""
    if t.name == "list":
        return t.elem or ANY
    if t == ZONE:
        return CARD
    return ANY


def assignable(src: Type, dst: Type) -> bool:
    """Can a value of type src be used where dst is expected?"""
    if src == dst or dst == ANY or src == ANY or src == NONE:
        return True
    if dst.name == "list" and src.name == "list":
        return assignable(src.elem or ANY, dst.elem or ANY)
    if dst.name == "list" and src == ZONE:      # a zone reads as the list of its cards
        return assignable(CARD, dst.elem or ANY)
    if dst.name == "tuple" and src.name == "tuple":
        return len(src.items) == len(dst.items) and all(
            assignable(s, d) for s, d in zip(src.items, dst.items))
    if dst.name == "lambda" and src.name == "lambda":
        return assignable(src.result or ANY, dst.result or ANY)
    return False


def join(a: Type, b: Type) -> Type:
    """The type of a value that is either a or b (if/else, list items)."""
    if a == b or b == NONE:
        return a
    if a == NONE:
        return b
    if a.name == "list" and b.name == "list":
        return list_of(join(a.elem or ANY, b.elem or ANY))
    if a == ZONE and b.name == "list":
        return join(CARDS, b)
    if b == ZONE and a.name == "list":
        return join(a, CARDS)
    return ANY


def substitute(t: Type, binding: dict) -> Type:
    if t.name in ("T", "K"):
        return binding.get(t.name, ANY)
    if t.name == "E":
        return elem_of(binding.get("T", ANY))
    if t.name == "list":
        return list_of(substitute(t.elem or ANY, binding))
    if t.name == "tuple":
        return tuple_of(*(substitute(i, binding) for i in t.items))
    if t.name == "lambda":
        return lambda_of(substitute(t.elem or ANY, binding), substitute(t.result or ANY, binding))
    return t


def unify(pattern: Type, actual: Type, binding: dict) -> bool:
    """Match a primitive's parameter type (with T/K) against an argument's type."""
    if pattern.name in ("T", "K"):
        if actual == NONE:
            return True
        bound = binding.get(pattern.name)
        if bound is None or bound == ANY:
            binding[pattern.name] = actual
            return True
        joined = join(bound, actual)
        if joined == ANY and ANY not in (bound, actual):
            return False
        binding[pattern.name] = joined
        return True
    if pattern.name == "list":
        if actual == ZONE:
            return unify(pattern.elem or ANY, CARD, binding)
        if actual.name == "list":
            return unify(pattern.elem or ANY, actual.elem or ANY, binding)
        return actual in (ANY, NONE)
    if pattern.name == "lambda":
        if actual.name != "lambda":
            return actual in (ANY, NONE)
        return unify(pattern.result or ANY, actual.result or ANY, binding)
    return assignable(actual, pattern)
