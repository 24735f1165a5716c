"""Parameters and targets of a search (`rulesvm tune`), read from the command line and
checked against the game, and the variant file a candidate is (pipeline: checked model ->
**search input** -> statistics): options, card fields by id or by selector, variables'
initial values; targets over the simulate metrics. The search is analysis/tune.py.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, replace

import yaml

from rulesvm import api

class TuneError(ValueError):
    """A parameter or target the game cannot take (the command line reports it, exit 2)."""


# ---------------------------------------------------------------------- parameters

@dataclass(frozen=True)
class Param:
    text: str            # as given: `laps=1..4`
    kind: str            # "option" or "card"
    name: str            # the option's name, or the card's id
    field: str | None    # the card's field
    values: tuple
    template: tuple = ()  # a variable's declaration before and after its initial value
    cards: tuple = ()     # the ids a selector (`card[kind=knight].number`) chose

    @property
    def label(self) -> str:
        if self.kind == "var":
            return f"var.{self.name}"
        if self.cards:
            return f"card{self.name}.{self.field}"
        return self.name if self.kind == "option" else f"card.{self.name}.{self.field}"


_NUMBER = r"-?\d+(?:\.\d+)?"
_RANGE = re.compile(rf"^({_NUMBER})\.\.({_NUMBER})(?::({_NUMBER}))?$")


def parse_values(text: str, where: str) -> tuple:
    """`1..9`, `0.5..1.5:0.25` (a range with a step) or `a,b,c` (a list) -> the values."""
    text = text.strip()
    m = _RANGE.match(text)
    if m:
        lo, hi, step = m.group(1), m.group(2), m.group(3)
        real = any("." in v for v in (lo, hi, step or ""))
        num = float if real else int
        lo_v, hi_v, step_v = num(lo), num(hi), num(step) if step else num(1)
        if step_v <= 0:
            raise TuneError(f"{where}: the step of `{text}` must be more than 0")
        if hi_v < lo_v:
            raise TuneError(f"{where}: the range `{text}` is empty ({lo} is more than {hi}); write LOW..HIGH")
        count = int(math.floor((hi_v - lo_v) / step_v + 1e-9)) + 1
        if count > 10_000:
            raise TuneError(f"{where}: `{text}` has {count} values; use a step (LOW..HIGH:STEP)")
        return tuple(round(lo_v + k * step_v, 10) if real else lo_v + k * step_v for k in range(count))
    items = [v.strip() for v in text.split(",")]
    if not text or any(not v for v in items):
        raise TuneError(f"{where}: `{text}` is neither a range (LOW..HIGH[:STEP]) nor a list (A,B,C)")
    return tuple(_scalar(v) for v in items)


def _scalar(text: str):
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(_NUMBER, text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_param(text: str, game: api.Game) -> Param:
    """`option.NAME=RANGE` (or `NAME=RANGE`) or `card.ID.FIELD=RANGE`, checked against the game."""
    where = f"--param {text}"
    close = text.find("]") + 1 if text.lstrip().startswith("card[") else 0     # a selector holds an `=`
    lhs, eq, rhs = text[close:].partition("=")
    lhs = text[:close] + lhs
    if not eq or not lhs.strip():
        raise TuneError(f"{where}: write NAME=RANGE, e.g. `option.laps=1..4` or `card.drop.number=6..9`")
    model = game.model
    selector = _SELECTOR.match(lhs.strip())
    if selector:
        return _selector_param(text, selector, parse_values(rhs, where), model, where)
    parts = lhs.strip().split(".")
    if parts[0] == "card":
        if len(parts) != 3:
            raise TuneError(f"{where}: a card field is written `card.ID.FIELD`, not `{lhs.strip()}`")
        cid, fname = parts[1], parts[2]
        card = next((c for c in model.cards if c.id == cid), None)
        if card is None:
            known = ", ".join(c.id for c in model.cards[:12]) + (", ..." if len(model.cards) > 12 else "")
            raise TuneError(f"{where}: the game has no card `{cid}` (cards: {known})")
        kind = model.kinds.get(card.kind)
        if kind is None or fname not in kind.fields:
            fields = ", ".join(kind.fields) if kind else "none"
            raise TuneError(f"{where}: card `{cid}` (a {card.kind}) has no field `{fname}` (fields: {fields})")
        values = parse_values(rhs, where)
        ftype = str(kind.fields[fname].type)
        if ftype == "int" and not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise TuneError(f"{where}: `{fname}` is a whole number; give whole numbers")
        return Param(text, "card", cid, fname, values)
    if parts[0] == "var":
        if len(parts) != 2:
            raise TuneError(f"{where}: a variable's initial value is written `var.NAME`, not `{lhs.strip()}`")
        return _var_param(text, parts[1], parse_values(rhs, where), model, where)
    if parts[0] == "option":
        parts = parts[1:]
    if len(parts) != 1:
        raise TuneError(f"{where}: write `option.NAME`, `NAME` (an option), `card.ID.FIELD` or `var.NAME`")
    name = parts[0]
    values = parse_values(rhs, where)
    try:
        checked = tuple(api.parse_option_overrides(model, [f"{name}={shown(v)}"])[name] for v in values)
    except ValueError as exc:
        raise TuneError(f"{where}: {exc}") from None
    return Param(text, "option", name, None, checked)


_SELECTOR = re.compile(r"^card\[\s*(\w+)\s*=\s*([^\]]*?)\s*\]\.(\w+)$")


def _selector_param(text: str, m, values: tuple, model, where: str) -> Param:
    """`card[kind=knight].number` or `card[color=red].number`: the field of every card whose
    kind (or whose field) has that value, all set to the same value."""
    key, wanted, fname = m.group(1), m.group(2), m.group(3)
    chosen = [c for c in model.cards
              if str(c.kind if key == "kind" else shown(c.fields.get(key, ""))) == wanted]
    if not chosen:
        raise TuneError(f"{where}: no card has {key} `{wanted}`")
    for c in chosen:
        kind = model.kinds.get(c.kind)
        if kind is None or fname not in kind.fields:
            raise TuneError(f"{where}: card `{c.id}` (a {c.kind}) has no field `{fname}`")
        if str(kind.fields[fname].type) == "int" and not all(isinstance(v, int) and not isinstance(v, bool)
                                                             for v in values):
            raise TuneError(f"{where}: `{fname}` is a whole number; give whole numbers")
    return Param(text, "card", f"[{key}={wanted}]", fname, values, cards=tuple(c.id for c in chosen))


def _var_param(text: str, name: str, values: tuple, model, where: str) -> Param:
    """A variable's initial value: the variant replaces its declaration, unchanged but for the value."""
    var = model.vars.get(name)
    if var is None:
        known = ", ".join(list(model.vars)[:12]) + (", ..." if len(model.vars) > 12 else "")
        raise TuneError(f"{where}: the rules declare no variable `{name}` (variables: {known or 'none'})")
    kind = var.type.name
    ok = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool), "bool": lambda v: isinstance(v, bool),
          "text": lambda v: isinstance(v, str)}.get(kind)
    if ok is None or var.default is None:
        raise TuneError(f"{where}: variable `{name}` is {var.type}; tune takes int, bool or text variables "
                        "declared with a value")
    if not all(ok(v) for v in values):
        raise TuneError(f"{where}: variable `{name}` is {kind}; give {kind} values")
    source = model.sources[var.span.file]
    whole, value = _slice(source, var.span), var.default.span
    head = _slice(source, replace(var.span, end_line=value.line, end_col=value.col))
    tail = _slice(source, replace(var.span, line=value.end_line, col=value.end_col))
    if head + _slice(source, value) + tail != whole:
        raise TuneError(f"{where}: the declaration of `{name}` cannot be rewritten")
    return Param(text, "var", name, None, values, (head, tail))


def _slice(source: str, span) -> str:
    """The text of `span` (lines and columns from 1, the end exclusive)."""
    lines = source.splitlines(keepends=True)
    start = sum(len(x) for x in lines[:span.line - 1]) + span.col - 1
    end = sum(len(x) for x in lines[:span.end_line - 1]) + span.end_col - 1
    return source[start:end]


def _literal(v) -> str:
    return json.dumps(v) if isinstance(v, str) else shown(v)


def shown(v) -> str:
    """A value as the command line and the variant file write it (`true`, not `True`)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


# ---------------------------------------------------------------------- targets

METRICS = ("first_player", "seats", "seat.N", "agent.SPEC", "draw_rate", "outcome.NAME", "card.ID", "decisions",
           "turns", "design.NAME")
_TARGET = re.compile(r"^(?P<metric>[^<>=@]+?)\s*(?:(?P<op><=|>=|=)\s*(?P<value>[^@]+?))?\s*(?:@\s*(?P<w>[^@]+))?$")


@dataclass(frozen=True)
class Target:
    text: str
    metric: str          # one of METRICS, with its name: `seat.1`, `card.drop`
    op: str              # "=", "<=", ">=" or "balanced"
    value: float | None
    weight: float = 1.0

    @property
    def is_rate(self) -> bool:
        return not self.metric.startswith(("decisions", "turns", "design."))


def parse_target(text: str, game: api.Game, players: int) -> Target:
    """`METRIC`, `METRIC=balanced`, `METRIC=V`, `METRIC<=V`, `METRIC>=V`, each with `@WEIGHT`."""
    where = f"--target {text}"
    m = _TARGET.match(text.strip())
    if not m:
        raise TuneError(f"{where}: write METRIC[=VALUE|<=VALUE|>=VALUE|=balanced][@WEIGHT]")
    metric, op, value, w = m.group("metric").strip(), m.group("op"), m.group("value"), m.group("w")
    try:
        weight = float(w) if w else 1.0
    except ValueError:
        raise TuneError(f"{where}: the weight `{w}` is not a number") from None
    if weight <= 0:
        raise TuneError(f"{where}: the weight must be more than 0")
    head, _, rest = metric.partition(".")
    if head in ("seat", "agent", "outcome", "card", "design") and not rest:
        raise TuneError(f"{where}: `{head}` needs a name: {head}.NAME")
    if head not in ("first_player", "seats", "seat", "agent", "draw_rate", "outcome", "card", "decisions", "turns",
                    "design") or (rest and head in ("first_player", "seats", "draw_rate", "decisions", "turns")):
        raise TuneError(f"{where}: unknown metric `{metric}`; metrics: {', '.join(METRICS)}")
    if head == "seat" and not (rest.isdigit() and 1 <= int(rest) <= players):
        raise TuneError(f"{where}: seats are numbered 1 to {players}, not `{rest}`")
    if head == "card" and rest not in {c.id for c in game.model.cards}:
        raise TuneError(f"{where}: the game has no card `{rest}`")
    if head in ("first_player", "seats", "seat", "draw_rate") and players < 2:
        raise TuneError(f"{where}: `{head}` needs two players or more; a solo game has outcomes (outcome.win)")
    if op is None or (op == "=" and value.strip() == "balanced"):
        if head not in ("first_player", "seats", "seat", "agent", "card"):
            raise TuneError(f"{where}: only first_player, seats, seat.N, agent.SPEC and card.ID can be balanced; "
                            f"give `{metric}` a value (=V, <=V or >=V)")
        return Target(text, metric, "balanced", None, weight)
    try:
        number = float(value)
    except ValueError:
        raise TuneError(f"{where}: `{value}` is not a number") from None
    return Target(text, metric, op, number, weight)


def variant_data(params, values, name: str = "tuned", base: str | None = None, description: str | None = None) -> dict:
    """A variant file's content setting each parameter to its value."""
    data: dict = {"variant": name}
    if description:
        data["description"] = description
    if base:
        data["base"] = base
    options = {p.name: v for p, v in zip(params, values) if p.kind == "option"}
    if options:
        data["options"] = options
    change: dict = {}
    for p, v in zip(params, values):
        if p.kind == "card":
            for cid in p.cards or (p.name,):
                change.setdefault(cid, {})[p.field] = v
    if change:
        data["cards"] = {"change": change}
    decls = [p.template[0] + _literal(v) + p.template[1] for p, v in zip(params, values) if p.kind == "var"]
    if decls:
        data["rules"] = {"replace": "\n".join(decls) + "\n"}
    return data


def write_variant(path: str, params, values, game_path: str, description: str) -> None:
    """Write the candidate as a variant file whose `base:` is the game, relative to the file."""
    stem = re.sub(r"[^a-z0-9_]", "_", os.path.splitext(os.path.basename(path))[0].lower()).strip("_")
    name = stem if stem and stem[0].isalpha() else "tuned"
    base = os.path.relpath(os.path.abspath(game_path), os.path.dirname(os.path.abspath(path)))
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(variant_data(params, values, name, base, description), fh, sort_keys=False, allow_unicode=True)
