"""What the rules may spend and build while a game runs (pipeline: running game).

Resource accounting, in one place. Both back ends call these helpers, so a limit means the
same whichever one runs the rules:

- **Work.** The step count (`rt.steps`, reset at every decision, at most `max_steps`) is
  charged 1 per statement and loop round, and besides *per element* for every operation
  whose work grows with its input: a comprehension per item of its iterable, `sum`,
  `max`, `sorted`, `in` over a list... per item touched, text and lists built by the
  rules per item (or character) produced. A statement that walks a million items costs a
  million steps, so `sum([sum(xs) for i in xs])` stops at the step limit (R002) instead of
  running for hours. Work bounded by the size of the rules is free, as a statement's own
  work is: a walk over fewer than `FREE_WALK` items written in a place whose every run is
  paid a step (a statement, the item of a comprehension charged per item, the body of a light
  function called from there: see purity.paid_walks), and lists and texts built by
  `+` shorter than `FREE_WALK`. A comprehension there whose items walk or call something is
  charged per item, so that its items are paid; in a lambda or a function called per item a
  walk is always charged.
- **Size.** A value the rules build may hold at most `MAX_ITEMS` items *written out*:
  shared structure counts as many times as it is shared (`xs = [xs, xs]` doubles), so
  anything the game holds can be logged, saved, observed and sent to a browser in bounded
  time and memory (R015). Values nest at most `MAX_NESTING` lists deep (R015), so no writer
  meets Python's recursion limit. Writers count texts by their characters as well and stop
  at `MAX_WRITTEN` (one long text shared by a million items).
- **Integers** are 64-bit signed, as in most engines: a result of `*`, `sum`, or of `+`,
  `-`, `+=`, `-=` between two computed numbers, outside [-2**63, 2**63 - 1] is R016, where
  Python would go on with ever larger numbers (`x = x * x` in a loop). Adding an amount
  bounded by the game files (a literal, a count, a card's printed number: purity.Bounded) is
  not checked: it cannot double a number (see may_double).
- **Calls** nest at most `MAX_CALL_DEPTH` deep (R004); a call of a `func` that may make
  `HEAVY_CALL` calls or more in all is charged that many steps before it runs.

The ceilings are engine constants a game file cannot raise (`max_steps` has a schema
maximum); docs/security.md lists them with their numbers.
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import ZONE

from .errors import (MAX_CALL_DEPTH, MAX_ITEMS, MAX_NESTING, int_overflow, runaway, too_big_to_write, too_deep, too_long,
                     too_nested)

# The range of integers the rules compute with (64-bit signed).
MAX_INT = 2 ** 63 - 1
MIN_INT = -2 ** 63

# Ranges shorter than this are built for free (the generated code writes `0..2` as a constant).
FREE_RANGE = 64

# A call of a `func` that may make this many calls or more in all (limits.call_weights) is
# charged that many steps before it runs (charge_count); lighter calls cost nothing.
HEAVY_CALL = 64

# Comparing lists or texts shorter than this costs no more than a statement; a card field
# whose every text is shorter reads short (see short, equal).
FREE_WALK = 64


def charge(rt, items, span):
    """`items`, after charging one step per item to the work of this decision: the work of
    a comprehension or built-in walking them (R002 past max_steps)."""
    if items is not None:
        n = rt.steps = rt.steps + len(items)
        if n > rt.max_steps:
            raise runaway(rt.max_steps, span, None)
    return items


def charge_long(rt, items, span):
    """`items`, charged as `charge` does when they are FREE_WALK or more: a comprehension
    written in a paid place (purity.paid_walks) over fewer items costs no more
    than its statement. Generated code tests the length inline and calls this only for long
    iterables (which are then never empty, so the call reads true)."""
    if items is not None and len(items) >= FREE_WALK:
        charge(rt, items, span)
    return items


def charge_count(rt, n: int, span) -> None:
    """Charge n steps of work (a product: its size; a heavy call: its weight)."""
    n = rt.steps = rt.steps + n
    if n > rt.max_steps:
        raise runaway(rt.max_steps, span, None)


def equal(rt, a, b, span) -> bool:
    """`a == b` for values that may be lists or texts: comparing two of the same length
    touches every item, and is charged so from FREE_WALK items on (shorter ones cost no more
    than the statement)."""
    t = type(a)
    if (t is tuple or t is str) and type(b) is t and len(a) == len(b) >= FREE_WALK:
        charge_count(rt, len(a), span)
    return a == b


def checked_int(v, span):
    """An integer result, refused past 64 bits (R016); any other value passes."""
    if type(v) is int and not MIN_INT <= v <= MAX_INT:
        raise int_overflow(v, span)
    return v


def overflow(v, span):
    """For generated code that has already compared: the integer is out of range."""
    raise int_overflow(v, span)


def written_size(v, room: int = MAX_ITEMS, depth: int = 0) -> int:
    """How many items `v` holds written out (a list: 1 + its items', a text or number: 1),
    counting past `room` only as far as needed to know it is too big."""
    if depth > MAX_NESTING:
        raise too_nested(None)
    n = 1
    for x in v:
        t = type(x)
        if t is tuple or t is list:
            n += written_size(x, room - n, depth + 1)
            if n > room:
                return n
        else:
            n += 1
    return n


def sized(rt, v, span):
    """A list just built whose items may be lists: refused if it is too big written
    out or nested too deep, else charged its written size as work."""
    if v is None:
        return v
    n = written_size(v)
    if n > MAX_ITEMS:
        raise too_long(n, span)
    charge_count(rt, n, span)
    return v


def bounded_range(rt, a: int, b: int, span) -> tuple:
    """`a..b`, refusing ranges too long to build; a range of `FREE_RANGE` items or more is
    charged its length (shorter ones cost nothing more than a literal list)."""
    if b - a >= MAX_ITEMS:
        raise too_long(b - a + 1, span)
    if b - a >= FREE_RANGE - 1:
        charge_count(rt, b - a + 1, span)
    return tuple(range(a, b + 1))


def grows(t) -> bool:
    """Can a value of static type t be of any length (a text, a list...)? A card, a player,
    a number or a truth value always reads short."""
    return t is None or t.name not in ("card", "player", "int", "bool", "none", "zone")


def bounded_join(rt, a, b, span, nested: bool = False):
    """`a + b`: numbers within 64 bits; lists and texts refused when too long to build,
    charged the length they produce from FREE_WALK on (`nested`: the items may be lists,
    sized as written out)."""
    t = type(a)
    if t is tuple or t is list or t is str:
        n = len(a) + len(b)
        if n > MAX_ITEMS:
            raise too_long(n, span)
        if n >= FREE_WALK:
            charge_count(rt, n, span)
        return sized(rt, a + b, span) if nested and t is not str else a + b
    return checked_int(a + b, span)


def joined(rt, v, span):
    """A text or list just built, whose items are not lists: by `+`, of a chain of zones, or
    by interpolation (`s = "{s}{s}"` in a loop doubles a text each round: it must stop long
    before it exhausts memory). Refused past MAX_ITEMS, charged its length from FREE_WALK
    on, as bounded_join; a shorter one costs no more than a literal (generated code tests
    the length inline where it can)."""
    n = len(v)
    if n >= FREE_WALK:
        if n > MAX_ITEMS:
            raise too_long(n, span)
        charge_count(rt, n, span)
    return v


def joined_text(rt, sep: str, parts, span) -> str:
    """`join(items, separator)`: the pieces joined, refused when the text would be too long."""
    n = len(sep) * max(len(parts) - 1, 0) + sum(len(p) for p in parts)
    if n > MAX_ITEMS:
        raise too_long(n, span)
    charge_count(rt, n, span)
    return sep.join(parts)


def bounded_pieces(pieces, sep: str = ", ") -> str:
    """Texts joined by a writer (a list shown in a log line), refused as soon as the text
    would pass MAX_ITEMS characters: a list shared many times inside itself reads short in
    memory and would be gigabytes written out."""
    out, n = [], 0
    for p in pieces:
        n += len(p) + len(sep)
        if n > MAX_ITEMS + len(sep):
            raise too_long(n, None)
        out.append(p)
    return sep.join(out)


def may_double(op: str, left, right, bounded) -> bool:
    """Is `left op right` (or `left op= right`) checked to stay within 64 bits? A product
    always is; a sum or difference only when neither side is bounded by the game files
    (`bounded`: purity.Bounded, e.g. a literal, a `count`, a card's printed number): adding a
    bounded amount grows a number by at most that much per step, never doubling it, so
    `n += 1` or `pool + count(hand)` in a loop stays far from 2**63 however long the step limit
    lets it run."""
    return op in ("*", "*=") or not (bounded(left) or bounded(right))


def zone_chain(e, types) -> list | None:
    """The zone expressions of `z1 + z2 + ...` (joined in one go and charged once by both back ends), or None if
    any term is not a zone."""
    if type(e) is A.Binary and e.op == "+":
        left, right = zone_chain(e.left, types), zone_chain(e.right, types)
        return left + right if left is not None and right is not None else None
    return [e] if types.get(e) == ZONE else None


def bounded_count(n: int, span) -> int:
    """The number of items a built-in is about to build (product, permutations), refused
    before building when too many."""
    if n > MAX_ITEMS:
        raise too_long(n, span)
    return n


def short(node, types, data=None) -> bool:
    """Does the expression always read short: a value of a scalar type, a text without
    interpolation, a list or tuple literal of such, or (`data(node)`) a card's printed field
    whose every value is short? Comparing it costs no more than the game files' own text, so
    it is not charged."""
    t = type(node)
    if t is A.StrLit:
        return all(isinstance(p, str) for p in node.parts)
    if t is A.ListLit or t is A.TupleLit:
        return all(short(i, types, data) for i in node.items)
    return not grows(types.get(node)) or (data is not None and t is A.Attr and data(node))


def may_be_list(t) -> bool:
    """May a value of static type t be (or hold) a list?"""
    if t is None or t.name in ("list", "any", "T", "K", "none"):
        return True
    return t.name == "tuple" and any(may_be_list(i) for i in t.items)


def nests(t) -> bool:
    """Can a value of static type t hold lists (so that its size written out may exceed its
    length)? Texts and numbers count one item each."""
    if t is None or t.name in ("any", "T", "K", "none"):
        return True
    if t.name == "list":
        return may_be_list(t.elem)
    return t.name == "tuple" and any(may_be_list(i) for i in t.items)


# The most characters a value may take written out by a writer (a save, an observation, an
# event in the log): a list of MAX_ITEMS items may share one long text many times.
MAX_WRITTEN = 16 * MAX_ITEMS


def checked_written(v, budget: list | None = None):
    """v, after checking that writing it out (texts by their characters) stays within
    MAX_WRITTEN; for writers that hand a value on as it is (an event's arguments)."""
    if budget is None:
        budget = [MAX_WRITTEN]
    if type(v) is tuple or type(v) is list:
        spend(budget, 1)
        for x in v:
            checked_written(x, budget)
    elif type(v) is str:
        spend(budget, len(v))
    else:
        spend(budget, 1)
    return v


def spend(budget: list, n: int) -> None:
    """A writer writes n more characters or items, counted against `budget` (a one-item list
    of what is left): past it, R015 instead of gigabytes of output."""
    budget[0] -= n
    if budget[0] < 0:
        raise too_big_to_write(MAX_WRITTEN - budget[0], MAX_WRITTEN)


def written_text(budget: list, text: str) -> str:
    """A text a writer is about to write, counted against `budget` (see spend)."""
    spend(budget, len(text))
    return text


__all__ = ["MAX_INT", "MIN_INT", "MAX_WRITTEN", "FREE_RANGE", "FREE_WALK", "HEAVY_CALL", "MAX_CALL_DEPTH",
           "charge", "charge_long", "charge_count", "equal", "checked_int", "overflow", "written_size", "sized", "bounded_range",
           "bounded_join", "joined", "joined_text", "bounded_pieces", "bounded_count", "grows", "short",
           "may_be_list", "nests", "may_double", "zone_chain", "checked_written", "spend", "written_text",
           "too_deep"]
