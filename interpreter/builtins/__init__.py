"""The implementations of the built-in primitives (checked model -> compiled program <-> running game).

One implementation per entry of the registry in `rulesvm.dsl.primitives`, declared with
`base.implements` in the module of its family: `values` (lists, numbers, texts, players),
`cards` (cards, zones, randomness) and `actions` (what changes the game). A test checks that
the implementations and the registry name the same primitives and that each primitive does
what its registry metadata says.
"""

from __future__ import annotations

from . import actions, cards, values  # noqa: F401  (each module registers its primitives)
from .actions import CARD_ACTIONS, log_text_draws_random
from .base import IMPLS, INLINE, STATEMENTS, Args, compile_primitive, implements
from .cards import card_property

__all__ = ["IMPLS", "INLINE", "STATEMENTS", "Args", "compile_primitive", "implements", "card_property",
           "CARD_ACTIONS", "log_text_draws_random"]
