"""The table's widgets as the pages draw them: `layout.widgets` (checked by dsl/widgets.py)
with every bound resolved to a number for this game's options.

A widget is sent once in the layout (no game state): the page reads the variables it shows
from each state's observation, so a widget shows exactly what the seat may see of them.
"""

from __future__ import annotations

from rulesvm.dsl.widgets import bound_name, widget_area, widget_vars


def option_number(model, options: dict, value) -> int | None:
    """A bound as a number: itself, or the option it names (this game's value, else its default)."""
    if value is None or isinstance(value, int):
        return value
    name = bound_name(value)
    got = options.get(name, model.options[name].default if name in model.options else None)
    if not isinstance(got, int):
        return None
    return -got if value.startswith("-") else got


def table_widgets(model, options: dict) -> dict:
    """name -> the widget's JSON: its style, label, area, scope of each variable and bounds as numbers."""
    out = {}
    for name, w in ((model.layout or {}).get("widgets") or {}).items():
        spec = {"name": name, "style": w["style"], "label": w.get("label") or name.replace("_", " ").capitalize(),
                "area": widget_area(w, model.vars)}
        if w["style"] == "track":
            lo, hi = option_number(model, options, w["from"]), option_number(model, options, w["to"])
            spec.update({"from": lo, "to": hi, "labels": list(w.get("labels") or []),
                         "end_labels": list(w.get("end_labels") or [])})
            spec["markers"] = [{**m, "per_player": m.get("var") in model.vars and model.vars[m["var"]].scope == "player"}
                               for m in w["markers"]]
        else:
            spec["var"] = w["var"]
            spec["per_player"] = model.vars[w["var"]].scope == "player"
            if w["style"] == "counter":
                spec["max"] = option_number(model, options, w.get("max"))
            else:
                spec["sides"] = w.get("sides", 6)
        out[name] = spec
    return out


def drawn_vars(model) -> set[str]:
    """The variables some widget draws (the pages do not repeat them as chips)."""
    return {v for w in ((model.layout or {}).get("widgets") or {}).values() for v in widget_vars(w)}
