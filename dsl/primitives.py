"""The registry of built-in primitives: one table feeding the checker, the compiler and the docs.

Each `Primitive` states its name, parameters (with types and defaults), result type, what
kind of thing it is (a pure function, a random draw, an action on the game, or a decision
that pauses the game for an agent), a one-line meaning and an example. The checker reads
signatures from here; `rulesvm.interpreter.builtins` registers one implementation per
entry (a test keeps the two in step); `docs/language.md` and the editor grammar under
`editors/` are generated from it, as Ludii's ludeme reference is generated from its classes.

What a primitive does beyond computing its result is stated here too, so that the
compiler derives its analyses from the registry instead of keeping lists of names
(tests/test_primitives.py checks each flag against what the implementation does):

- `moves_cards`: it moves cards between zones, so it fires `moved` triggers (and must run
  as VM code in a game that has one);
- `random`: it draws from the game's seeded generator (so does evaluating its call: such
  an expression must run whether or not anyone listens);
- `pure`: its result depends only on its arguments, not on the game state, the player
  count or the generator, so a call with constant arguments is constant (a new primitive
  is impure until marked);
- `runs_ability`: it runs a card's ability, so it pauses whenever an ability can;
- `turns_card`: it changes only how one card lies (face up/down, rotation) and emits a
  record named after itself;
- and, from the category: `decision` (it asks a player and pauses the game) and
  `statement_only` (an action or decision: only as a statement or `let x = ...`, never
  in a function).

`MOVING_PRIMITIVES`, `RANDOM_PRIMITIVES`, `DECISION_PRIMITIVES` and the other sets below
are these flags as sets of names.
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import (ABILITY, ANY, BOOL, CARD, CARDS, E, INT, INTS, K, PLAYER, PLAYERS, T, TEXT,
                    VOID, ZONE, Type, lambda_of, list_of)

REQUIRED = object()
# Categories whose primitives change the game: statements only, never in a function.
STATEMENT_ONLY_CATEGORIES = ("action", "decision")


@dataclass(frozen=True)
class PParam:
    name: str
    type: Type
    default: object = REQUIRED   # a Python value, or REQUIRED
    doc: str = ""
    names: str = ""              # "field" or "kind": a literal text argument must name one (E228)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Primitive:
    name: str
    params: tuple
    returns: Type
    category: str        # "function", "random", "action", "decision"
    doc: str
    example: str
    # What it does besides computing its result (see the module docstring).
    moves_cards: bool = False
    random: bool = False
    pure: bool = False
    runs_ability: bool = False
    turns_card: bool = False

    @property
    def decision(self) -> bool:
        return self.category == "decision"

    @property
    def statement_only(self) -> bool:
        return self.category in STATEMENT_ONLY_CATEGORIES

    @property
    def signature(self) -> str:
        parts = []
        for p in self.params:
            text = f"{p.name}: {p.type}"
            if not p.required:
                text += f" = {_show_default(p.default)}"
            parts.append(text)
        ret = "" if self.returns == VOID else f" -> {self.returns}"
        return f"{self.name}({', '.join(parts)}){ret}"


def _show_default(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


# A "cards" parameter takes one card, a list of cards, or a zone (all its cards).
CARDLIKE = Type("cards")
# A "players" parameter takes one player or a list of players.
PLAYERLIKE = Type("players")

P = PParam
LIST_T = list_of(T)

_ALL = [
    # ------------------------------------------------------------------ lists and numbers
    Primitive("count", (P("items", LIST_T),), INT, "function",
              "Number of items in a list (or cards in a zone).", "count(hand(p)) >= 3", pure=True),
    Primitive("sum", (P("items", INTS),), INT, "function",
              "Sum of a list of numbers (0 when empty).", "sum([c.number for c in row(p)])", pure=True),
    Primitive("max", (P("items", INTS), P("default", INT, None, "value when the list is empty")), INT,
              "function", "Largest number of a list.", "max([c.number for c in row(p)], default: 0)", pure=True),
    Primitive("min", (P("items", INTS), P("default", INT, None, "value when the list is empty")), INT,
              "function", "Smallest number of a list.", "min([p.score for p in players])", pure=True),
    Primitive("any", (P("items", list_of(BOOL)),), BOOL, "function",
              "True when at least one item is true.", "any([c.kind == \"joker\" for c in hand(p)])", pure=True),
    Primitive("all", (P("items", list_of(BOOL)),), BOOL, "function",
              "True when every item is true (also for an empty list).", "all([p.passed for p in players])", pure=True),
    Primitive("sorted", (P("items", LIST_T), P("key", lambda_of(T, K), None, "sort key of an item"),
                         P("desc", BOOL, False, "largest first")), LIST_T, "function",
              "The items in ascending order of their key (a stable sort).",
              "sorted(players, key: p => (-p.power, distance(start_player, p)))", pure=True),
    Primitive("reversed", (P("items", LIST_T),), LIST_T, "function",
              "The items in reverse order.", "reversed(row(p))", pure=True),
    Primitive("distinct", (P("items", LIST_T),), LIST_T, "function",
              "The items without repeats, in order of first appearance.", "distinct([c.number for c in row(p)])",
              pure=True),
    Primitive("multiplicities", (P("items", LIST_T),), INTS, "function",
              "How often each distinct item occurs, largest first (poker-hand shapes: [3, 2] is a full house).",
              "multiplicities([c.number for c in row(p)])", pure=True),
    Primitive("product", (P("lists", list_of(LIST_T)),), list_of(LIST_T), "function",
              "Every way to pick one item from each list, in order (the cartesian product).",
              "product([[\"R1\", \"R2\"], [\"A+\", \"D-\"]])", pure=True),
    Primitive("permutations", (P("items", LIST_T), P("size", INT, None, "how many to arrange; none = all")),
              list_of(LIST_T), "function", "Every ordering of `size` distinct items of the list.",
              "permutations([1, 2, 3], 2)", pure=True),
    Primitive("join", (P("items", list_of(TEXT)), P("separator", TEXT, " ")), TEXT, "function",
              "The texts joined with a separator.", "join([\"R2\", \"AT\"], \" \")", pure=True),
    Primitive("flatten", (P("lists", list_of(ANY)),), list_of(ANY), "function",
              "One list from a list of lists, or the cards of a list of zones, in order.",
              "flatten([column(i) for i in 0..5])", pure=True),
    Primitive("first", (P("items", LIST_T),), T, "function",
              "The first item, or none when empty.", "first(rewards)", pure=True),
    Primitive("last", (P("items", LIST_T),), T, "function",
              "The last item, or none when empty.", "last(row(p))", pure=True),
    Primitive("slice", (P("items", LIST_T), P("start", INT), P("end", INT, None, "exclusive; none = to the end")),
              LIST_T, "function", "The items from index start (0-based) up to, not including, end.",
              "slice(recruit, 0, 5)", pure=True),
    Primitive("index_of", (P("items", LIST_T), P("item", T)), INT, "function",
              "Position of an item in a list (0-based), or -1.", "index_of(row(p), self)", pure=True),
    Primitive("abs", (P("value", INT),), INT, "function", "Absolute value.", "abs(a.position - b.position)", pure=True),
    Primitive("sign", (P("value", INT),), INT, "function", "-1, 0 or 1.", "sign(gap)", pure=True),
    Primitive("clamp", (P("value", INT), P("low", INT), P("high", INT)), INT, "function",
              "The value limited to the range low..high.", "clamp(gap, -2, 2)", pure=True),
    Primitive("text", (P("value", ANY),), TEXT, "function",
              "A value as text (cards by name, players as `Player N`).", "text(p.score)", pure=True),
    Primitive("digits", (P("value", INT),), INTS, "function",
              "The decimal digits of a number, most significant first.", "digits(1204)", pure=True),
    # ------------------------------------------------------------------ players
    Primitive("next_player", (P("player", PLAYER), P("steps", INT, 1)), PLAYER, "function",
              "The player `steps` seats clockwise (to the left).", "next_player(start_player)"),
    Primitive("players_from", (P("player", PLAYER),), PLAYERS, "function",
              "Every player in clockwise order, starting with the given one.", "players_from(start_player)"),
    Primitive("distance", (P("from", PLAYER), P("to", PLAYER)), INT, "function",
              "Seats clockwise from one player to another (0 for the same player).",
              "distance(start_player, p)"),
    Primitive("player", (P("seat", INT),), PLAYER, "function",
              "The player in a seat, counting from 1.", "player(1)"),
    Primitive("opponent", (P("player", PLAYER),), PLAYER, "function",
              "In a two-player game, the other player.", "opponent(p)"),
    # ------------------------------------------------------------------ cards and zones
    Primitive("top", (P("zone", ZONE),), CARD, "function",
              "The top card of a zone (the last one placed), or none.", "top(recruit)"),
    Primitive("bottom", (P("zone", ZONE),), CARD, "function",
              "The bottom card of a zone (the first one placed), or none.", "bottom(deck(p))"),
    Primitive("owner", (P("card", CARD),), PLAYER, "function",
              "The player whose zone holds the card, or none in a shared zone.", "owner(c)"),
    Primitive("zone_of", (P("card", CARD),), ZONE, "function",
              "The zone that holds the card.", "zone_of(c) == hand(p)"),
    Primitive("position", (P("card", CARD),), INT, "function",
              "The card's index in its zone (0 = bottom of a pile, left end of a row).",
              "position(self)"),
    Primitive("zone_index", (P("zone", ZONE),), INT, "function",
              "A zone's number in its indexed family (`column(3)` -> 3; a grid counts row by row), or -1.",
              "zone_index(zone_of(c))"),
    Primitive("zone_owner", (P("zone", ZONE),), PLAYER, "function",
              "The player a zone belongs to, or none for a shared zone.", "zone_owner(z)"),
    Primitive("field_at", (P("card", CARD), P("field", TEXT, names="field"), P("side", TEXT, "front"), P("turn", INT, 0)),
              ANY, "function",
              "A field's value as printed on a side (`front`/`back`) and end (0, 90, 180, 270) of a card, "
              "however the card lies now (`c.field` reads the way it lies).",
              "field_at(danger, \"effects\", side: \"back\", turn: 180)"),
    Primitive("name_at", (P("card", CARD), P("side", TEXT, "front"), P("turn", INT, 0)), TEXT, "function",
              "A card's name as printed on a side and end, however it lies now.",
              "name_at(c, side: \"back\")"),
    Primitive("cards_of_kind", (P("kind", TEXT, names="kind"),), CARDS, "function",
              "Every card of a kind, wherever it is, in card order.", "cards_of_kind(\"knight\")"),
    Primitive("card", (P("id", TEXT),), CARD, "function",
              "The card with this id (`id` for a single card, `id#n` for the n-th copy).",
              "card(\"first_player_token\")"),
    # ------------------------------------------------------------------ randomness (seeded)
    Primitive("roll", (P("sides", INT, 6),), INT, "random",
              "A die roll from 1 to `sides`, from the game's seeded generator.", "roll(6)", random=True),
    Primitive("random_pick", (P("items", LIST_T),), T, "random",
              "One item picked at random by the game's seeded generator.", "random_pick(players)", random=True),
    # ------------------------------------------------------------------ actions
    Primitive("move", (P("cards", CARDLIKE), P("to", ZONE),
                       P("at", TEXT, "top", "\"top\" (end) or \"bottom\" (start) of the zone"),
                       P("face", TEXT, "keep", "\"up\", \"down\" or \"keep\"; zones may set a default")),
              VOID, "action",
              "Move a card, a list of cards or every card of a zone to a zone, keeping their order.",
              "move(c, row(p), face: \"down\")", moves_cards=True),
    Primitive("draw", (P("from", ZONE), P("to", ZONE), P("n", INT, 1),
                       P("face", TEXT, "keep")), CARDS, "action",
              "Move up to n cards one by one from the top of a zone; returns the cards moved.",
              "draw(deck(p), hand(p), 5 - count(hand(p)))", moves_cards=True),
    Primitive("shuffle", (P("zone", ZONE),), VOID, "action",
              "Shuffle a zone with the game's seeded generator.", "shuffle(recruit)", random=True),
    Primitive("shuffle_into", (P("cards", CARDLIKE), P("to", ZONE),
                               P("face", TEXT, "keep", "\"up\", \"down\" or \"keep\"; zones may set a default")),
              VOID, "action",
              "Move a card, a list of cards or every card of a zone into a zone, each at a random position "
              "(a card shuffled into a deck); the cards already there keep their order.",
              "shuffle_into(c, deck(p), face: \"down\")", moves_cards=True, random=True),
    Primitive("flip", (P("card", CARD),), VOID, "action",
              "Turn a card over (face up <-> face down; front <-> back).", "flip(c)", turns_card=True),
    Primitive("face_up", (P("card", CARD),), VOID, "action", "Turn a card face up.", "face_up(c)", turns_card=True),
    Primitive("face_down", (P("card", CARD),), VOID, "action", "Turn a card face down.", "face_down(c)",
              turns_card=True),
    Primitive("rotate", (P("card", CARD), P("degrees", INT, 90)), VOID, "action",
              "Rotate a card clockwise by 90, 180 or 270 degrees (tapping, turning it around).",
              "rotate(c, 180)", turns_card=True),
    Primitive("set_turn", (P("card", CARD), P("degrees", INT)), VOID, "action",
              "Set a card's rotation to 0, 90, 180 or 270 degrees.", "set_turn(c, 0)", turns_card=True),
    Primitive("log", (P("message", TEXT), P("to", PLAYER, None, "only this player sees the line")), VOID, "action",
              "Write a line to the game log (everyone sees it unless `to:` names a player).",
              "log(\"{p} plays {c}\")"),
    Primitive("reveal", (P("cards", CARDLIKE), P("to", PLAYERLIKE, None, "a player or a list of players; none: everyone")),
              VOID, "action",
              "Show cards to some players (or to everyone): from now on they know each card where it lies, "
              "until it moves where they cannot follow it (see What a seat knows).",
              "reveal(hand(opponent), to: p)"),
    Primitive("end_game", (P("ranking", list_of(ANY), None, "players best first; a list of players for a tie"),
                           P("scores", INTS, None, "one score per player, in seat order"),
                           P("winner", PLAYER, None), P("outcome", TEXT, None, "e.g. \"win\", \"loss\"")),
              VOID, "action", "End the game with its result.",
              "end_game(ranking: order, scores: [p.power for p in players])"),
    Primitive("use", (P("ability", ABILITY), P("card", CARD), P("player", PLAYER)), VOID, "action",
              "Run a card ability with `self` = card and `you` = player.", "use(c.ability, c, p)", runs_ability=True),
    # ------------------------------------------------------------------ decisions
    Primitive("choose", (P("options", LIST_T), P("by", PLAYER),
                         P("prompt", TEXT, "Choose"),
                         P("label", lambda_of(T, TEXT), None, "how an option is shown"),
                         P("pass", TEXT, None, "adds an option with this label that returns none"),
                         P("secret", BOOL, False, "other players see that a choice was made, not which"),
                         P("help", TEXT, None, "a line interactive players see, e.g. the codes they can type"),
                         P("confirm", BOOL, False, "interactive players confirm their answer before it counts"),
                         P("steps", list_of(TEXT), None,
                           "one prompt per step; each option is then a list of picks, one per step, and people "
                           "pick them one at a time ([Compound choices](#compound-choices))"),
                         P("step_label", lambda_of(E, TEXT), None,
                           "how one pick (E: an item of an option) is shown at its step"),
                         P("unavailable", TEXT, None, "when `options` is empty, nothing is asked (not even `pass`): "
                           "the choice gives none and the player is told this reason")),
              T, "decision", "Ask a player to pick one option; the game pauses until an agent answers. With one "
              "option it is taken without asking (the player is told: the only legal option).",
              "let c = choose(hand(p), by: p, prompt: \"Play a card\", pass: \"Pass\", "
              "unavailable: \"no card can be played\")"),
    Primitive("choose_many", (P("options", LIST_T), P("by", PLAYER), P("min", INT, 0),
                              P("max", INT, None, "none = all"), P("prompt", TEXT, "Choose"),
                              P("label", lambda_of(T, TEXT), None), P("done", TEXT, "Done"),
                              P("secret", BOOL, False, "other players see that a choice was made, not which")),
              LIST_T, "decision",
              "Ask a player to pick several options one at a time (in the order picked).",
              "let order = choose_many(row(p), by: p, min: count(row(p)))"),
]

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _ALL}


def _named(flag) -> frozenset:
    return frozenset(p.name for p in _ALL if flag(p))


MOVING_PRIMITIVES = _named(lambda p: p.moves_cards)
RANDOM_PRIMITIVES = _named(lambda p: p.random)
PURE_PRIMITIVES = _named(lambda p: p.pure)
ABILITY_PRIMITIVES = _named(lambda p: p.runs_ability)
CARD_TURNING_PRIMITIVES = _named(lambda p: p.turns_card)
DECISION_PRIMITIVES = _named(lambda p: p.decision)
STATEMENT_ONLY_PRIMITIVES = _named(lambda p: p.statement_only)

# Built-in properties of cards and players (`c.kind`, `p.seat`), beside declared fields/vars.
CARD_PROPERTIES: dict[str, tuple[Type, str]] = {
    "id": (TEXT, "the card's id (`id#n` for the n-th copy of a card with a count)"),
    "kind": (TEXT, "the card's kind"),
    "name": (TEXT, "the card's display name"),
    "faceup": (BOOL, "whether the card is face up"),
    "turn": (INT, "the card's rotation in degrees: 0, 90, 180 or 270"),
    "owner": (PLAYER, "the player whose zone holds the card (none in a shared zone)"),
    "zone": (ZONE, "the zone holding the card"),
}
PLAYER_PROPERTIES: dict[str, tuple[Type, str]] = {
    "seat": (INT, "the player's seat number, 1 for the first player"),
}
# Names every script can use.
CONSTANTS: dict[str, tuple[Type, str]] = {
    "players": (PLAYERS, "every player, in seat order"),
    "player_count": (INT, "the number of players in this game"),
}
# Names an ability's body (and a computed card field) can use besides the game's own.
ABILITY_NAMES: dict[str, tuple[Type, str]] = {
    "self": (CARD, "the card whose ability runs"),
    "you": (PLAYER, "the player using it"),
}
# Zones every game has.
BUILTIN_ZONES = {"box": "where every card starts: shared, hidden; setup moves cards out of it"}

# Zone modifiers the checker accepts, with their meaning (docs and did-you-mean).
ZONE_MODIFIERS = {
    "per_player": "one zone of this name per player (`hand(p)`); otherwise a single shared zone",
    "ordered": "the order of cards matters and is kept (piles, rows); unordered zones are shown sorted",
    "hidden": "nobody sees the cards, only how many there are (a deck)",
    "visible": "who sees the face-up cards: `visible(all)` or `visible(owner)`",
    "facedown_visible": "who also sees face-down cards: `facedown_visible(owner)`",
    "indexed": "a family of zones numbered from 0: `indexed(6)` (columns, score places) or "
               "`indexed(4, 5)` (a grid: `cell(col, row)`)",
    "compact": "with `indexed(n)`: whenever a zone of the family is empty, the zones after it close up "
               "to the left (a play area that compacts)",
    "faceup": "cards arriving in the zone are turned face up",
    "facedown": "cards arriving in the zone are turned face down",
}
VAR_MODIFIERS = {
    "per_player": "one value per player (`p.name`)",
    "per_card": "one value per card (`c.name`)",
    "visible": "who sees the value: `visible(all)` (default) or `visible(owner)` (per-player only)",
}
OPTION_MODIFIERS = {
    "doc": "a description shown by `rulesvm info`: `doc(\"...\")`",
    "range": "allowed integer range: `range(1, 4)`",
    "choices": "allowed values: `choices(\"a\", \"b\")`",
}
