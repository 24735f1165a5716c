"""Card rule texts (card data -> checked model): a card's `text:` with `{field}` placeholders.

A card kind (the `kinds:` mapping of a game or card-set file) or a single card (its own
`text:`, or one per side under `faces:`) may carry the rule text a player reads. Each
`{field}` names a printed field of the card's kind (or `{name}`); `{{` and `}}` are braces.
The loader checks every placeholder against the kind's fields (E235 at the placeholder)
and fills the text in once per card, so front ends show plain text and nothing is
computed while a game runs.
"""

from __future__ import annotations

import re

from .diagnostics import Diagnostic, Span, did_you_mean, listing

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def localized(value) -> dict:
    """A text or a {language: text} mapping as a mapping (empty for no text)."""
    if isinstance(value, str):
        return {"en": value}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}
    return {}


def _column(span: Span, text: str, offset: int) -> Span:
    """The position of `text[offset]` when the YAML value is on one line and written as is
    (plain, or quoted without escapes); else the value's own position."""
    if span.end_line == span.line and span.end_col is not None:
        width = span.end_col - span.col
        if width == len(text):
            return Span(span.file, span.line, span.col + offset)
        if width == len(text) + 2:
            return Span(span.file, span.line, span.col + 1 + offset)
    return span


def check(texts: dict, fields: dict, computed: set, span_of, kind: str) -> list[Diagnostic]:
    """E235 for each placeholder in `texts` ({language: text}) that is not a printed field of
    the kind (`fields`: name -> field definition), or names a field computed during play;
    `span_of(language)` is where that language's text is written."""
    diags = []
    for lang, text in texts.items():
        span = span_of(lang)
        for m in _PLACEHOLDER.finditer(text):
            name = m.group(1)
            if name is None:
                continue
            name = name.strip()
            at = _column(span, text, m.start())
            if name in computed:
                diags.append(Diagnostic("E235", f"`{{{name}}}`: field `{name}` is a formula, computed during play",
                                        at, "a card text shows printed values only; describe the formula in words"))
            elif name != "name" and name not in fields:
                known = sorted(fields) + ["name"]
                hint = did_you_mean(name, known) or f"fields of kind `{kind}`: " + listing(known)
                diags.append(Diagnostic("E235", f"unknown field `{{{name}}}` in a card text", at, hint))
    return diags


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value)
    return "" if value is None else str(value)


def fill(texts: dict, values: dict, names: dict) -> dict:
    """`texts` with every placeholder replaced by the card's value ({language: text});
    `names` is the card's name by language."""
    out = {}
    for lang, text in texts.items():
        def one(m, lang=lang):
            whole = m.group(0)
            if whole in ("{{", "}}"):
                return whole[0]
            name = m.group(1).strip()
            if name == "name":
                return names.get(lang) or names.get("en", "")
            return _shown(values.get(name))
        out[lang] = _PLACEHOLDER.sub(one, text)
    return out
