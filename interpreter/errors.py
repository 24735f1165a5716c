"""Errors raised while a game runs (pipeline: running game).

A `RulesRuntimeError` names the rule (procedure or phase) and the source position where the
rules did something impossible (an index past the end of a zone, a choice with no legal
option, a runaway loop); the engine adds the game's seed and decision number so the saved
log can be replayed up to that point. `IllegalMove` is an agent answering with an option
that is not offered.
"""

from __future__ import annotations

from rulesvm.dsl.diagnostics import Span

# The most items a list or text built by the rules may hold (see limits.py).
MAX_ITEMS = 1_000_000

# The most calls of procedures, abilities and recursive functions running inside each other
# without a pause (see limits.py): endless recursion stops here, at the same call whichever
# back end runs it and however deep Python's own stack already is.
MAX_CALL_DEPTH = 120

# The most lists a value may nest inside each other (see limits.py): every writer of values
# (logs, saves, observations, the web table) walks them recursively; as deep as the rules
# may write a list literal (dsl/parser.py MAX_NESTING).
MAX_NESTING = 200


class RulesRuntimeError(Exception):
    def __init__(self, message: str, span: Span | None = None, rule: str | None = None,
                 code: str = "R001", hint: str | None = None):
        self.message = message
        self.span = span
        self.rule = rule
        self.code = code
        self.hint = hint
        self.seed = None
        self.decision = None
        super().__init__(message)

    def describe(self) -> str:
        where = f"{self.span}: " if self.span is not None and self.span.line else ""
        rule = f" (in {self.rule})" if self.rule else ""
        extra = ""
        if self.seed is not None:
            extra = f"\n   = game seed {self.seed}, after decision {self.decision}"
        hint = f"\n   = hint: {self.hint}" if self.hint else ""
        return f"{where}runtime error[{self.code}]: {self.message}{rule}{extra}{hint}"


class RunawayError(RulesRuntimeError):
    pass


class IllegalMove(Exception):
    """An answer that is not one of the legal options of the current decision."""


# ---------------------------------------------------------------------- constructors
# Every runtime error the rules can meet is built here, once, whichever back end (closures or
# generated code) or runtime helper finds it: the code, the words and the hint stay the same.

def R(code: str, message: str, span=None, hint: str | None = None, rule: str | None = None) -> RulesRuntimeError:
    return RulesRuntimeError(message, span, rule, code, hint)


def runaway(max_steps: int, span, rule: str) -> RunawayError:
    return RunawayError(f"the rules ran {max_steps} steps without asking for a decision (a loop that never ends?)",
                        span, rule, "R002", "check the loop's condition, or raise max_steps in the game file")


def no_end_game(span) -> RulesRuntimeError:
    return R("R003", "the game block finished without calling end_game", span,
             "call end_game(...) when the game is over", "the game block")


def too_deep(span, rule: str | None) -> RulesRuntimeError:
    """Calls nested deeper than MAX_CALL_DEPTH."""
    return R("R004", f"the rules call themselves too deeply: more than {MAX_CALL_DEPTH} calls inside each other "
             "(endless recursion?)", span, "a function or procedure that calls itself needs a case that stops", rule)


def python_recursion(span, rule: str | None) -> RulesRuntimeError:
    return R("R004", "the rules call themselves too deeply (endless recursion?)", span,
             "a function that calls itself needs a case that stops", rule)


def impossible(message: str, span, rule: str | None) -> RulesRuntimeError:
    return R("R005", message, span, None, rule)


def no_player(prim: str, span) -> RulesRuntimeError:
    return R("R006", f"`{prim}` needs a player (`by:` is none)", span)


def no_options(span) -> RulesRuntimeError:
    return R("R007", "`choose` has no options to offer", span,
             "check that the list is not empty first, or give a `pass:` option")


def too_few_options(low: int, found: int, span) -> RulesRuntimeError:
    return R("R007", f"`choose_many` needs {low} picks but only {found} options exist", span)


def bad_step_option(index: int, steps: int, value, span) -> RulesRuntimeError:
    if steps == 0:
        return R("R005", "`steps:` names no step", span, "give one text per pick")
    return R("R005", f"with `steps:` ({steps} steps), every option must be a list of {steps} picks; "
             f"option {index + 1} is {value!r}", span, "build each option as a list with one pick per step")


def of_none(what: str, span) -> RulesRuntimeError:
    """`what` (a primitive in backquotes, "zone `hand`") was given none."""
    return R("R008", f"{what} of none", span)


def zone_of_none(name: str, span) -> RulesRuntimeError:
    return of_none(f"zone `{name}`", span)


def move_to_none(span, prim: str = "move") -> RulesRuntimeError:
    return R("R008", f"`{prim}` to none", span)


def set_of_none(attr: str, span) -> RulesRuntimeError:
    return R("R008", f"cannot set `.{attr}` of none", span)


def index_of_none(span) -> RulesRuntimeError:
    return R("R009", "cannot index none", span)


def index_outside(i, size: int, what: str, span) -> RulesRuntimeError:
    """`what`: "zone" (size in cards) or "list" (size in items)."""
    unit = "cards" if what == "zone" else "items"
    return R("R009", f"index {i} is outside the {what} ({size} {unit})", span)


def no_such_zone(name: str, index: int, size: int, span) -> RulesRuntimeError:
    return R("R009", f"`{name}({index})` does not exist: indexes are 0 to {size - 1}", span)


def no_such_cell(name: str, col: int, row: int, dims: tuple, span) -> RulesRuntimeError:
    return R("R009", f"`{name}({col}, {row})` does not exist: the grid is {dims[0]} x {dims[1]} (from 0)", span)


def division_by_zero(op: str, span) -> RulesRuntimeError:
    return R("R010", f"division by zero in `{op}`", span)


def empty_list(prim: str, span, hint: str | None = None) -> RulesRuntimeError:
    return R("R011", f"`{prim}` of an empty list", span, hint)


def empty_pick(span) -> RulesRuntimeError:
    return R("R011", "`random_pick` from an empty list", span)


def no_seat(seat, players: int, span) -> RulesRuntimeError:
    return R("R012", f"there is no seat {seat} in a {players}-player game", span)


def not_two_players(span) -> RulesRuntimeError:
    return R("R012", "`opponent` needs a two-player game", span)


def no_card_id(key, span) -> RulesRuntimeError:
    return R("R013", f"no card has the id `{key}`", span)


def bad_side(side, turn, span) -> RulesRuntimeError:
    return R("R014", f"no side `{side}` at {turn} degrees", span, "side is `front` or `back`; turn is 0, 90, 180 or 270")


def bad_face(value, span) -> RulesRuntimeError:
    return R("R014", f"`face:` must be \"up\", \"down\" or \"keep\", not `{value}`", span)


def bad_at(value, span) -> RulesRuntimeError:
    return R("R014", f"`at:` must be \"top\" or \"bottom\", not `{value}`", span)


def bad_degrees(value, span) -> RulesRuntimeError:
    return R("R014", f"a card turns by multiples of 90 degrees, not {value}", span)


def too_long(n: int, span) -> RulesRuntimeError:
    return R("R015", f"the rules built a list or text of {n:,} items, more than the {MAX_ITEMS:,} allowed", span,
             "a loop that keeps growing a list?")


def too_big_to_write(n: int, limit: int) -> RulesRuntimeError:
    return R("R015", f"a value the rules hold takes {n:,} characters written out, more than the {limit:,} a log "
             "line, save or observation may take", None, "a list that holds one long text many times?")


def too_nested(span) -> RulesRuntimeError:
    return R("R015", f"the rules built lists nested more than {MAX_NESTING} deep", span,
             "a loop that keeps wrapping a list in another (`xs = [xs]`)?")


def int_overflow(v: int, span) -> RulesRuntimeError:
    side = "above 2**63 - 1" if v > 0 else "below -2**63"
    return R("R016", f"a number grew {side}: rules count with 64-bit integers", span,
             "a loop that keeps multiplying or adding a number to itself?")


def out_of_memory(span, rule: str | None) -> RulesRuntimeError:
    return R("R015", "the rules ran out of memory", span, f"lists and texts may hold at most {MAX_ITEMS:,} items", rule)


def card_misplaced(message: str) -> RulesRuntimeError:
    """Debug mode found the engine's own bookkeeping broken (never the rules' fault)."""
    return R("R900", message)
