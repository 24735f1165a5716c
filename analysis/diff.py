"""What a variant changes: options, cards and rule parts (`rulesvm diff GAME --variant V`).

Loads the base game and the game with the variants applied, then compares: option values,
cards by id (added, removed, changed fields and counts), and the rules' named parts by
their source text (a unified diff for each part replaced, added or removed).
"""

from __future__ import annotations

import difflib

from rulesvm.dsl.loader import load_game_model
from rulesvm.dsl.variants import decl_kind, decl_name


def _decl_text(model, decl) -> str:
    span = decl.span
    text = model.sources.get(span.file)
    if text is None:
        try:
            with open(span.file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            return "(source not available)"
    lines = text.splitlines()
    first, last = span.line - 1, span.end_line - 1
    if first == last:
        return lines[first][span.col - 1:span.end_col - 1]
    chunk = [lines[first][span.col - 1:]] + lines[first + 1:last] + [lines[last][:span.end_col - 1]]
    # Remove the common indentation (rules embedded in YAML are indented).
    indent = min((len(ln) - len(ln.lstrip()) for ln in chunk[1:] if ln.strip()), default=0)
    return "\n".join([chunk[0]] + [ln[indent:] for ln in chunk[1:]])


def _decls(model) -> dict:
    out = {}
    for f in model.rules_ast:
        for i, d in enumerate(f.decls):
            name = decl_name(d) or f"(trigger on {d.event} #{i})"
            out[name] = d
    return out


def variant_diff(game_path: str, variants: list[str], card_sets=()) -> dict:
    base = load_game_model(game_path, list(card_sets))
    var = load_game_model(game_path, list(card_sets), list(variants))
    options = []
    for name, opt in var.options.items():
        old = base.options[name].default if name in base.options else None
        new = var.option_overrides.get(name, opt.default)
        if name not in base.options or old != new:
            options.append({"name": name, "from": _plain(old), "to": _plain(new)})
    base_cards = {c.id: c for c in base.cards}
    var_cards = {c.id: c for c in var.cards}
    cards = {"added": [], "removed": [], "changed": []}
    for cid, c in var_cards.items():
        if cid not in base_cards:
            cards["added"].append({"id": cid, "kind": c.kind, "count": c.count, "fields": _plain(c.fields)})
    for cid, c in base_cards.items():
        if cid not in var_cards:
            cards["removed"].append({"id": cid, "kind": c.kind, "count": c.count})
            continue
        n = var_cards[cid]
        changes = {}
        if n.count != c.count:
            changes["count"] = [c.count, n.count]
        if n.kind != c.kind:
            changes["kind"] = [c.kind, n.kind]
        for key in sorted(set(c.fields) | set(n.fields)):
            if c.fields.get(key) != n.fields.get(key):
                changes[key] = [_plain(c.fields.get(key)), _plain(n.fields.get(key))]
        if n.name != c.name:
            changes["name"] = [c.name.get("en"), n.name.get("en")]
        if changes:
            cards["changed"].append({"id": cid, "changes": changes})
    old_decls, new_decls = _decls(base), _decls(var)
    rules = []
    for name, d in new_decls.items():
        new_text = _decl_text(var, d)
        if name not in old_decls:
            rules.append({"part": name, "kind": decl_kind(d), "change": "added", "diff": _udiff("", new_text, name)})
        else:
            old_text = _decl_text(base, old_decls[name])
            if old_text.strip() != new_text.strip():
                rules.append({"part": name, "kind": decl_kind(d), "change": "replaced",
                              "diff": _udiff(old_text, new_text, name)})
    for name, d in old_decls.items():
        if name not in new_decls:
            rules.append({"part": name, "kind": decl_kind(d), "change": "removed",
                          "diff": _udiff(_decl_text(base, d), "", name)})
    return {"game": base.id, "variants": var.applied_variants, "options": options, "cards": cards, "rules": rules}


def _udiff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), f"base/{name}", f"variant/{name}", lineterm="")
    return "\n".join(lines)


def _plain(v):
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v
