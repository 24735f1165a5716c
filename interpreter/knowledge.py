"""What each seat knows of the cards, beyond what it sees now (pipeline: running game -> agents).

A seat *knows* a card when it can name the card where it lies. The state keeps this as one
bitmask of seats per card (`GameState.known`, bit s = seat s, 0-based), updated by every
effect that moves, shuffles, turns or shows cards, by the rules below (documented in
docs/language.md#what-a-seat-knows):

- a seat knows every card it sees (zone visibility and faces, as observations show them);
- `reveal(cards, to: seats)` makes those seats know the cards;
- a card that moves stays known to a seat that knew it when the seat sees it where it was
  or where it arrives, or when it left a zone from which the table can tell which card went
  (any zone but one only its owner sees, such as a hand);
- when a card leaves such a hand for a place a seat does not see, that seat cannot tell
  which card went: it forgets every card it knew in that hand (it knows the hand still
  holds them, or one of them went, but not which);
- a card moved to a random position (`shuffle_into`), or shuffled with its zone, stays
  known only to the seats that see it there (its place is lost);
- a card turned face down stays known to those who saw it.

So `known[c]` always includes the seats that see `c` now. The masks of each zone come from
the program's tables (`see_up`, `see_down`, `follows`); a game in which every card is always
in every seat's sight (`tracks_knowledge` false) keeps no knowledge at all.
"""

from __future__ import annotations


def sight(prog, c: int, z: int, up: bool) -> int:
    """The seats that see card `c` lying in zone `z`, face up or not."""
    return prog.see_up[z] if up or prog.card_backed[c] else prog.see_down[z]


def moved(prog, st, c: int, src: int, up_before: bool) -> None:
    """Card `c` has moved from `src` to where it lies now (its face set): who knows it there."""
    z = st.where[c]
    seen = sight(prog, c, src, up_before) | sight(prog, c, z, st.faceup[c])
    known = st.known
    if prog.follows[src]:
        known[c] |= seen
        return
    known[c] = seen
    # A card left a hand unseen: a seat that did not see which can no longer tell which of
    # the cards it knew there are still there.
    unseen = ((1 << prog.max_players) - 1) & ~seen
    if unseen:
        keep = ~unseen
        faceup = st.faceup
        for x in st.zones[src]:
            known[x] &= keep | sight(prog, x, src, faceup[x])


def lost_place(prog, st, c: int) -> None:
    """Card `c` now lies at a position nobody chose (a shuffle, `shuffle_into`): only the
    seats that see it there know it."""
    st.known[c] = sight(prog, c, st.where[c], st.faceup[c])


def turned(prog, st, c: int) -> None:
    """Card `c` changed faces where it lies: whoever saw it, and whoever sees it now, knows it."""
    st.known[c] |= sight(prog, c, st.where[c], st.faceup[c])


def seen(prog, st, cards) -> None:
    """Cards put in place by a set-up (a scenario, a seat's own hand): known to whoever sees them."""
    for c in cards:
        st.known[c] = sight(prog, c, st.where[c], st.faceup[c])


def reveal(rt, cards, seats: int) -> None:
    """Show `cards` to the seats in the mask `seats` (the `reveal` primitive's effect)."""
    st = rt.st
    if rt.prog.tracks_knowledge:
        for c in cards:
            st.known[c] |= seats


def knows(prog, st, c: int, seat: int) -> bool:
    """Can `seat` (0-based; -1 = everything) name card `c` where it lies: it sees it or knows it."""
    return seat < 0 or bool((st.known[c] | sight(prog, c, st.where[c], st.faceup[c])) >> seat & 1)


def known_unseen(prog, st, seat: int) -> list[int]:
    """The cards `seat` knows but does not see now, in card order."""
    bit = 1 << seat
    return [c for c, k in enumerate(st.known)
            if k & bit and not sight(prog, c, st.where[c], st.faceup[c]) & bit]
