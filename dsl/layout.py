"""Checks of a game file's `layout:` hints against the game's declarations.

`layout:` is optional data for the web table (`rulesvm serve`, see docs/web.md): where the
zones lie (the centre of the table, each player's area), how each zone is drawn, which
variables are shown and which card fields are printed on the faces. Its shape is checked by
the JSON schema (dsl/schema.py); this module checks what the schema cannot: that every name
is a zone, variable, card kind or field the rules declare, and that the areas are well formed
(a shared zone in the centre, a per-player zone in the players' areas, grid rows of one
length, a name spanning cells only as a rectangle). Codes: E090 an unknown name, E091 a zone
placed where it cannot go, E092 a drawing style that does not fit the zone.
"""

from __future__ import annotations

from .diagnostics import Diagnostic, did_you_mean
from .widgets import check_widgets

INDEXED_STYLES = {"grid": 2, "columns": 1}


def check_layout(layout, zones: dict, variables: dict, kinds: dict, marks, options: dict | None = None) -> list[Diagnostic]:
    """Every problem of `layout` (the game file's `layout:` value); [] when it is absent.
    `options`: the game's options (the bounds of widgets may name them)."""
    if not isinstance(layout, dict) or not layout:
        return []
    out: list[Diagnostic] = []
    names = {n for n in zones if n != "box"}
    widgets = layout.get("widgets") if isinstance(layout.get("widgets"), dict) else {}

    def err(code, message, path, hint=None):
        out.append(Diagnostic(code, message, marks.span(("layout",) + tuple(path)), hint))

    def zone_name(name, path, what="zone") -> bool:
        if name in zones:
            return True
        err("E090", f"unknown {what} `{name}` in the layout", path,
            did_you_mean(name, names | set(widgets)) or "the zones are declared in the rules with `zone NAME: ...`, "
            "widgets under `layout.widgets`")
        return False

    placed: dict = {}
    for area, per_player in (("centre", False), ("player", True)):
        cells = layout.get(area)
        if not isinstance(cells, list):
            continue
        rows = [r for r in cells if isinstance(r, list)]
        if rows and len(rows) != len(cells):
            err("E091", f"`layout.{area}` mixes zone names and rows of cells", (area,),
                "write either a list of zone names, or a list of rows (lists of names)")
            continue
        grid = [[c for c in row] for row in rows] if rows else [[c] for c in cells]
        if rows and len({len(r) for r in rows}) > 1:
            err("E091", f"the rows of `layout.{area}` have different lengths ({', '.join(str(len(r)) for r in rows)})",
                (area,), "give every row the same number of cells (null for an empty cell)")
            continue
        seen_here: dict = {}
        for i, row in enumerate(grid):
            for j, name in enumerate(row):
                if name is None:
                    continue
                path = (area, i, j) if rows else (area, i)
                if name in widgets and name not in zones:
                    seen_here.setdefault(name, []).append((i, j, path))     # placed like a zone (dsl/widgets.py)
                    continue
                if not zone_name(name, path):
                    continue
                if name == "box":
                    err("E091", "the box is never drawn on the table", path)
                    continue
                if zones[name].per_player != per_player:
                    where = "player" if zones[name].per_player else "centre"
                    err("E091", f"zone `{name}` is {'per player' if zones[name].per_player else 'shared'}: "
                        f"it belongs in `layout.{where}`, not `layout.{area}`", path)
                    continue
                if name in placed and placed[name] != area:
                    err("E091", f"zone `{name}` is placed twice (in `layout.{placed[name]}` too)", path)
                    continue
                placed[name] = area
                seen_here.setdefault(name, []).append((i, j, path))
        for name, spots in seen_here.items():
            if len(spots) < 2:
                continue
            if not rows:
                err("E091", f"zone `{name}` is listed twice in `layout.{area}`", spots[1][2])
                continue
            rs = [s[0] for s in spots]
            cs = [s[1] for s in spots]
            box = {(r, c) for r in range(min(rs), max(rs) + 1) for c in range(min(cs), max(cs) + 1)}
            if box != {(s[0], s[1]) for s in spots}:
                err("E091", f"the cells of zone `{name}` in `layout.{area}` do not form a rectangle", spots[-1][2],
                    "a zone may span several cells, side by side and row under row, as one rectangle")
    for i, name in enumerate(layout.get("hide") or []):
        if zone_name(name, ("hide", i)) and name in placed:
            err("E091", f"zone `{name}` is both hidden and placed in `layout.{placed[name]}`", ("hide", i))
    for name, hint in (layout.get("zones") or {}).items():
        if not zone_name(name, ("zones", name)) or not isinstance(hint, dict):
            continue
        z = zones[name]
        style = hint.get("style")
        need = INDEXED_STYLES.get(style)
        if need is not None and len(z.dims) != need:
            form = "indexed(cols, rows)" if need == 2 else "indexed(n)"
            err("E092", f"style `{style}` draws a zone declared `{form}`; `{name}` is "
                + (f"indexed({', '.join(map(str, z.dims))})" if z.dims else "a single zone"), ("zones", name, "style"),
                "use `row`, `column`, `hand`, `stack` or `pile` for a single zone" if not z.dims else None)
        for key, dims in (("row_labels", 2), ("col_labels", 2), ("cell_labels", 1)):
            if key in hint and len(z.dims) != dims:
                err("E092", f"`{key}` is for zones declared `{'indexed(cols, rows)' if dims == 2 else 'indexed(n)'}`",
                    ("zones", name, key))
    check_widgets(layout, zones, variables, options or {}, err)
    var_hints = layout.get("vars") or {}
    shown = {n for n, v in variables.items() if v.scope in ("global", "player")}
    for i, name in enumerate(var_hints.get("hide") or []):
        if name not in shown:
            err("E090", f"unknown variable `{name}` in the layout", ("vars", "hide", i), did_you_mean(name, shown))
    for name in var_hints.get("labels") or {}:
        if name not in shown:
            err("E090", f"unknown variable `{name}` in the layout", ("vars", "labels", name), did_you_mean(name, shown))
    cards = layout.get("cards") or {}
    all_fields = {f for k in kinds.values() for f in k.fields}

    def fields_of(face: dict, known: set, path: tuple) -> None:
        for key in ("number", "color"):
            if key in face and face[key] not in known:
                err("E090", f"unknown card field `{face[key]}` in the layout", path + (key,),
                    did_you_mean(face[key], known))
        for i, f in enumerate(face.get("fields") or []):
            if f not in known:
                err("E090", f"unknown card field `{f}` in the layout", path + ("fields", i), did_you_mean(f, known))
    fields_of(cards, all_fields, ("cards",))
    for kind, face in (cards.get("kinds") or {}).items():
        if kind not in kinds:
            err("E090", f"unknown card kind `{kind}` in the layout", ("cards", "kinds", kind),
                did_you_mean(kind, kinds))
        elif isinstance(face, dict):
            fields_of(face, set(kinds[kind].fields), ("cards", "kinds", kind))
    return out
