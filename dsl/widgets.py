"""Checks of the web table's widgets: `layout.widgets` in a game file (docs/web.md#widgets).

A widget draws game variables as a board game would rather than as a "name: value" chip: a
`track` (positions on a line with markers, e.g. a race or a score track), a `counter` (a
token with a number) or a `die` (a die face). The JSON schema (dsl/schema.py) checks their
shape; this module checks the names against the rules: every variable a widget shows is a
declared global or per-player integer variable, every bound is an integer or an integer
option, a widget's name is not also a zone's, and it is placed where it can be drawn (a
track or a global variable's widget in the centre, a per-player variable's counter or die
in the players' areas). Codes as for the rest of the layout: E090 an unknown name, E091 a
widget placed where it cannot go, E092 a widget that does not fit its variable.
"""

from __future__ import annotations

from .diagnostics import did_you_mean

WIDGET_STYLES = ("track", "counter", "die")
SHOWN_SCOPES = ("global", "player")


def bound_name(value) -> str | None:
    """The option a bound names (`max_gap`, or `-max_gap` for its negation), or None for a number."""
    if isinstance(value, str):
        return value[1:] if value.startswith("-") else value
    return None


def widget_vars(widget: dict) -> list[str]:
    """The variables a widget draws, in order."""
    if widget.get("style") == "track":
        return [m["var"] for m in widget.get("markers") or () if isinstance(m, dict) and "var" in m]
    return [widget["var"]] if "var" in widget else []


def widget_area(widget: dict, variables: dict) -> str:
    """Where a widget belongs: "player" for a counter or die of a per-player variable, else "centre"."""
    if widget.get("style") != "track":
        v = variables.get(widget.get("var"))
        if v is not None and v.scope == "player":
            return "player"
    return "centre"


def check_widgets(layout: dict, zones: dict, variables: dict, options: dict, err) -> None:
    """Report (through `err(code, message, path, hint)`) every problem of `layout.widgets`."""
    widgets = layout.get("widgets")
    if not isinstance(widgets, dict):
        return
    shown = {n: v for n, v in variables.items() if v.scope in SHOWN_SCOPES}
    int_options = {n for n, o in options.items() if str(o.type) == "int"}
    for name, w in widgets.items():
        if not isinstance(w, dict):
            continue
        path = ("widgets", name)
        if name in zones:
            err("E091", f"widget `{name}` has the name of a zone", path,
                "give the widget a name of its own: a name in `layout.centre`/`layout.player` is a zone or a widget")
        for key in ("from", "to", "max"):
            opt = bound_name(w.get(key))
            if opt is not None and opt not in int_options:
                err("E090", f"unknown integer option `{opt}` as `{key}` of widget `{name}`", path + (key,),
                    did_you_mean(opt, int_options) or "a bound is a whole number or the name of an `int` option")
        markers = w.get("markers") or []
        for i, var in enumerate(widget_vars(w)):
            where = path + (("markers", i, "var") if markers else ("var",))
            v = variables.get(var)
            if v is None or v.scope not in SHOWN_SCOPES:
                err("E090", f"unknown variable `{var}` in widget `{name}`", where,
                    did_you_mean(var, shown) or "a widget shows a global or per-player variable")
            elif str(v.type) != "int" and not (w.get("style") == "counter" and str(v.type) == "bool"):
                err("E092", f"widget `{name}` draws a number, but `{var}` is of type {v.type}", where,
                    "a track, counter or die shows an `int` variable")
        if w.get("style") == "track" and "from" in w and "to" in w \
                and isinstance(w["from"], int) and isinstance(w["to"], int) and w["from"] >= w["to"]:
            err("E092", f"track `{name}` goes from {w['from']} to {w['to']}: `from` must be below `to`", path)
    for area in ("centre", "player"):
        cells = layout.get(area)
        if not isinstance(cells, list):
            continue
        flat = [(c, (area, i, j)) for i, row in enumerate(cells) if isinstance(row, list) for j, c in enumerate(row)]
        flat += [(c, (area, i)) for i, c in enumerate(cells) if not isinstance(c, list)]
        for cell, where in flat:
            w = widgets.get(cell) if isinstance(cell, str) else None
            if isinstance(w, dict) and widget_area(w, variables) != area:
                belongs = widget_area(w, variables)
                why = "a track shows every player's marker" if w.get("style") == "track" else \
                    f"its variable is {'per player' if belongs == 'player' else 'global'}"
                err("E091", f"widget `{cell}` belongs in `layout.{belongs}`, not `layout.{area}` ({why})", where)
