"""Scripted randomness for scenarios (`chance:`): fix a die roll, a pick or a shuffle.

A scenario with `chance:` plays its game with explicit chance (interpreter/chance.py): every
random event is a chance decision, and this module answers them. The next `roll` takes the
next value of `rolls`, the next `random_pick` the next entry of `picks`, the next
`shuffle_into` the next entry of `shuffle_into`, and the next shuffle of a zone listed in
`shuffles` puts the listed cards on top, in order; every other random event draws from the
scenario's seed exactly as without `chance:` (with `strict: true` it is an error instead).
A scripted outcome that the event cannot have, and one never used, are errors at its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulesvm.dsl.diagnostics import Span

KINDS = {"roll": "rolls", "random_pick": "picks", "shuffle_into": "shuffle_into"}
DESCRIBED = {"rolls": "die roll", "picks": "random pick", "shuffle_into": "card shuffled into a zone"}


class ScriptError(Exception):
    """A scripted outcome that cannot be used (the scenario turns it into a failure at `span`)."""

    def __init__(self, message: str, span: Span | None):
        super().__init__(message)
        self.message = message
        self.span = span


@dataclass
class Entry:
    value: object
    span: Span


@dataclass
class ChanceScript:
    """The outcomes still to hand out, by kind of random event."""
    queues: dict                                    # "rolls" / "picks" / "shuffle_into" -> [Entry]
    shuffles: dict                                  # zone name (as the program names it) -> [Entry], top first
    strict: bool = False
    strict_span: Span | None = None                 # where `strict: true` is written
    active: dict = field(default_factory=dict)      # zone -> entries left of the shuffle under way
    shuffle_keys: dict = field(default_factory=dict)  # zone -> the scenario's key span (a shuffle that never came)

    def settle(self, match) -> None:
        """Answer chance decisions until a player must decide, the game ends or it pauses."""
        while match.is_chance():
            self._answer(match)

    def _answer(self, match) -> None:
        d = match.decision
        name, _, arg = d.help.partition("(")
        if name == "shuffle":
            return self._shuffle(match, arg.rstrip(")"))
        kind = KINDS[name]
        queue = self.queues.get(kind) or []
        if not queue:
            return self._unscripted(match, f"a {DESCRIBED[kind]} ({d.prompt})", kind)
        entry = queue.pop(0)
        for i, o in enumerate(d.options):
            if _same(match, o, entry.value, by_value=kind == "rolls"):
                return match.apply(i)
        raise ScriptError(f"scripted {DESCRIBED[kind]} `{entry.value}` is not a possible outcome of "
                          f"{d.help}; possible: {', '.join(d.labels)}", entry.span)

    def _shuffle(self, match, zone: str) -> None:
        d = match.decision
        if zone not in self.active:
            if zone not in self.shuffles:
                return self._unscripted(match, f"a shuffle of {zone}", "shuffles")
            self.active[zone] = (self.shuffles.pop(zone), len(d.options))
        left, size = self.active[zone]
        last = len(d.options) == 2      # this decision also settles the bottom card
        if not left:
            match.sample_chance()
        else:
            entry = left.pop(0)
            i = next((k for k, o in enumerate(d.options) if _same(match, o, entry.value)), None)
            if i is None:
                raise ScriptError(f"`{entry.value}` cannot be the next card of the shuffle of {zone} ({d.prompt}): "
                                  f"the cards left to place are {', '.join(d.labels)}", entry.span)
            match.apply(i)
            if last and left:
                bottom = d.options[1 - i]
                entry = left.pop(0)
                if not _same(match, bottom, entry.value):
                    raise ScriptError(f"`{entry.value}` cannot be the bottom card of {zone}: it is {bottom.label}",
                                      entry.span)
        if last:
            del self.active[zone]
            if left:
                raise ScriptError(f"{zone} was shuffled with {size} cards, but the scenario lists "
                                  f"{size + len(left)}", left[0].span)

    def _unscripted(self, match, what: str, kind: str) -> None:
        if self.strict:
            raise ScriptError(f"{what} happened, but no scripted outcome is left for it (`strict: true`)",
                              self.strict_span)
        match.sample_chance()

    def leftover(self) -> ScriptError | None:
        """The first scripted outcome never used, as an error (None: all were used)."""
        for kind, queue in self.queues.items():
            if queue:
                return ScriptError(f"scripted {DESCRIBED[kind]} `{queue[0].value}` was never used ({len(queue)} "
                                   f"left over): the game made no more {DESCRIBED[kind]}s", queue[0].span)
        for zone in self.shuffles:
            return ScriptError(f"scripted shuffle of {zone} was never used: {zone} was not shuffled "
                               "(with 2 or more cards)", self.shuffle_keys.get(zone))
        return None


def _same(match, option, wanted, by_value: bool = False) -> bool:
    """Does `option` stand for the scripted outcome `wanted`: its value (a die face), its
    label, or for a card its id (`knight_1`, or `knight_1#2` for one copy)?"""
    if by_value:
        return option.value == wanted and not isinstance(wanted, bool)
    if option.label == str(wanted):
        return True
    d = match.decision
    if d.value_type == "card" and isinstance(option.value, int):
        card_id = match.program.card_ids[option.value]
        return card_id == wanted or card_id.split("#")[0] == wanted
    return False
