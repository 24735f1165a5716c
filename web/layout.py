"""The table's layout: where each zone lies and how it is drawn, from the game's declarations.

A game file may give `layout:` hints (checked by dsl/schema.py and dsl/layout.py; reference
in docs/web.md). Whatever they leave out comes from the zone declarations:

- shared zones go to the centre and per-player zones to each player's area, in declaration
  order; the box is never drawn;
- a hidden zone is a pile (a back and a count), a zone only its owner sees is a hand, a zone
  declared `indexed(cols, rows)` is a grid, `indexed(n)` a row of columns, any other zone a
  row of cards.

The result is plain JSON sent once to every page; it holds no game state.
"""

from __future__ import annotations

from rulesvm.dsl.types import ABILITY

from .widgets import drawn_vars, table_widgets

NUMBER_FIELDS = ("number", "value", "power", "cost", "level", "points", "rank")
COLOR_FIELDS = ("color", "colour")


def _title(name: str) -> str:
    return name.replace("_", " ").strip().capitalize()


def default_style(z) -> str:
    if len(z.dims) == 2:
        return "grid"
    if len(z.dims) == 1:
        return "columns"
    if z.hidden or z.visible == "none":
        return "pile"
    if z.visible == "owner":
        return "hand"
    return "row"


def _area(hint, names: list[str]) -> dict:
    """An area from a hint (names in order, or rows of cells) and the zones it must show."""
    if isinstance(hint, list) and hint and all(isinstance(r, list) for r in hint):
        rows = [[c if c in names else None for c in row] for row in hint]
        placed = {c for row in rows for c in row if c}
        return {"rows": rows, "extra": [n for n in names if n not in placed]}
    order = [n for n in (hint or []) if n in names] if isinstance(hint, list) else []
    return {"flow": order + [n for n in names if n not in order], "extra": []}


def _placed(hint) -> set:
    """The names an area's hint places (a list of names, or rows of cells)."""
    if not isinstance(hint, list):
        return set()
    return {c for item in hint for c in (item if isinstance(item, list) else [item]) if isinstance(c, str)}


def table_layout(model, options: dict | None = None) -> dict:
    """The layout of a game's table (JSON), hints merged over defaults; `options`: this game's
    option values (widgets' bounds may name options)."""
    hints = model.layout or {}
    widgets = table_widgets(model, options or {})
    zone_hints = hints.get("zones") or {}
    hidden = set(hints.get("hide") or []) | {"box"}
    zones = sorted((z for z in model.zones.values() if z.name != "box"), key=lambda z: z.index)
    specs = {}
    for z in zones:
        h = zone_hints.get(z.name) or {}
        style = h.get("style") or default_style(z)
        spec = {"name": z.name, "label": h.get("label") or _title(z.name), "style": style,
                "per_player": z.per_player, "dims": list(z.dims), "visible": "none" if z.hidden else z.visible,
                "ordered": z.ordered, "size": h.get("size", "small" if z.dims else "normal"),
                "stack": h.get("stack", "down"), "reverse": bool(h.get("reverse", False))}
        if z.dims:
            spec["min_cells"] = h.get("min_cells", z.dims[0] if len(z.dims) == 2 else 1)
        for key in ("cell_labels", "row_labels", "col_labels"):
            if key in h:
                spec[key] = list(h[key])
        specs[z.name] = spec
    shared = [z.name for z in zones if not z.per_player and z.name not in hidden]
    per_player = [z.name for z in zones if z.per_player and z.name not in hidden]
    # Widgets are placed by name like zones; those not placed are drawn with the variables'
    # chips (the centre's, or in each player's header).
    placed = _placed(hints.get("centre")) | _placed(hints.get("player"))
    shared += [n for n, w in widgets.items() if w["area"] == "centre" and n in placed]
    per_player += [n for n, w in widgets.items() if w["area"] == "player" and n in placed]
    loose = {a: [n for n, w in widgets.items() if w["area"] == a and n not in placed] for a in ("centre", "player")}
    var_hints = hints.get("vars") or {}
    var_hidden = set(var_hints.get("hide") or []) | drawn_vars(model)
    labels = dict(var_hints.get("labels") or {})
    gvars = [v.name for v in model.vars_of("global") if v.name not in var_hidden]
    pvars = [v.name for v in model.vars_of("player") if v.name not in var_hidden]
    return {
        "centre": _area(hints.get("centre"), shared),
        "player": _area(hints.get("player"), per_player),
        "zones": specs,
        "widgets": widgets,
        "vars": {"global": gvars, "player": pvars, "widgets": {"global": loose["centre"], "player": loose["player"]},
                 "labels": {n: labels.get(n, _title(n)) for n in gvars + pvars}},
        "kinds": card_faces(model, hints.get("cards") or {}),
        "colors": dict(hints.get("colors") or {}),
        # Images of backs are added by the table, which serves them (see table.py).
        "backs": {name: {k: x for k, x in v.items() if k != "image"} for name, v in (hints.get("backs") or {}).items()},
    }


def card_faces(model, hint: dict) -> dict:
    """Per card kind: the field printed large, the colouring field, the printed fields and
    their defaults (a field at its default is left off the face)."""
    out = {}
    card_vars = [v.name for v in model.vars_of("card")]
    for kind in model.kinds.values():
        kh = (hint.get("kinds") or {}).get(kind.name) or {}
        fields = kind.fields
        ints = [f for f, fd in fields.items() if str(fd.type) == "int"]
        number = kh.get("number") or (hint.get("number") if hint.get("number") in fields else None) or \
            next((f for f in NUMBER_FIELDS if f in ints), None)
        color = kh.get("color") or (hint.get("color") if hint.get("color") in fields else None) or \
            next((f for f in COLOR_FIELDS if f in fields), None)
        if "fields" in kh:
            printed = list(kh["fields"])
        elif "fields" in hint:
            printed = [f for f in hint["fields"] if f in fields]
        else:
            printed = [f for f in fields if f not in (number, color)]
        defaults = {}
        for f in printed:
            fd = fields.get(f)
            if fd is not None and fd.has_default:
                defaults[f] = list(fd.default) if isinstance(fd.default, tuple) else fd.default
            elif fd is not None and fd.type == ABILITY:
                defaults[f] = None
        out[kind.name] = {"number": number, "color": color, "fields": printed, "defaults": defaults,
                          "vars": card_vars}
    return out
