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
  holds them, or one of them went, but not which), unless the hand is left empty or moves
  as a whole (then every card in it went);
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
    """Card `c` has moved from `src` to where it lies now (its face set): who knows it there.
    (`sight` written out twice: this runs for every card moved.)"""
    z = st.where[c]
    backed = prog.card_backed[c]
    seen = (prog.see_up[src] if up_before or backed else prog.see_down[src]) | \
        (prog.see_up[z] if backed or st.faceup[c] else prog.see_down[z])
    known = st.known
    if prog.follows[src] or seen == prog.everyone or not st.zones[src]:
        # The table can tell which card went (or everyone saw it, or the hand is empty now).
        known[c] |= seen
        return
    known[c] = seen
    # A card left a hand unseen: a seat that did not see which can no longer tell which of
    # the cards it knew there are still there.
    unseen = prog.everyone & ~seen
    if unseen:
        forget_in(prog, st, src, unseen)


def forget_in(prog, st, z: int, seats: int) -> None:
    """The cards of zone `z` are no longer known to `seats`, except to those that see them there."""
    known, keep = st.known, ~seats
    for x in st.zones[z]:
        if known[x] & seats:
            known[x] &= keep | sight(prog, x, z, st.faceup[x])


def zone_moved(prog, st, cards, src: int, dst: int, face) -> None:
    """Every card of zone `src` is about to arrive in `dst`, turned to `face` ("up", "down",
    or None/"keep": as they lie): who knows each there. Called before the faces change. The
    whole zone goes, so everyone can tell which cards went: whoever knew one still does."""
    su, sd, du, dd = prog.see_up[src], prog.see_down[src], prog.see_up[dst], prog.see_down[dst]
    known = st.known
    if su == sd and du == dd:
        # Faces do not matter here (the common case: a deck, a hand, a public pile).
        seen = su | du
        if seen:
            for c in cards:
                known[c] |= seen
        return
    faceup, backed = st.faceup, prog.card_backed
    for c in cards:
        up = faceup[c]
        after = up if face is None or face == "keep" else face == "up"
        b = backed[c]
        known[c] |= (su if up or b else sd) | (du if after or b else dd)


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
    if rt.tracks:
        known = rt.st.known
        for c in cards:
            known[c] |= seats


def knows(prog, st, c: int, seat: int) -> bool:
    """Can `seat` (0-based; -1 = everything) name card `c` where it lies: it sees it or knows it."""
    return seat < 0 or bool((st.known[c] | sight(prog, c, st.where[c], st.faceup[c])) >> seat & 1)


def known_unseen(prog, st, seat: int) -> list[int]:
    """The cards `seat` knows but does not see now, in card order."""
    bit = 1 << seat
    return [c for c, k in enumerate(st.known)
            if k & bit and not sight(prog, c, st.where[c], st.faceup[c]) & bit]
