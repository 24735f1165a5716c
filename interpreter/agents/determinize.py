"""Determinization: a full game state a seat could believe in, built from what it may see.

Search agents must not peek. Before they look ahead they replace the true state by a
*sample*: every card whose face the seat cannot see (cards in hidden zones, in other
players' hands, face down) is dealt again at random among the hidden places showing the
same card back (games where cards have different backs say so with `back:` in the card
data; observations then show the backs), a face-down card's end-for-end orientation (0 or
180, 90 or 270) is drawn again, and the game's own random generator is reseeded. The sample depends only on the seat's
observation and the agent's generator, never on where the hidden cards really are: two
true states that look the same to the seat give the same samples (tested).

What the seat *knows* stays too (knowledge.py): a card it was shown, passed or saw go
into a hand or onto a deck is left where it is, and only the cards it cannot name are dealt
again, among the places it cannot name; with `memory=False` the seat forgets (it keeps only
what it sees now), which is how a bot plays without memory. Limit (documented in
docs/simulate.md): hidden per-player variables keep their values.
"""

from __future__ import annotations

from .. import rng as R
from ..observation import can_see_card


def hidden_places(match, seat: int, memory: bool = True) -> list[tuple[int, int, bool]]:
    """(zone, position, kind shown) of every card `seat` cannot identify (does not see, nor
    know when `memory`), in a fixed order.

    `kind shown` is False in zones shown only as counts (a deck, another player's hand):
    there the seat knows how many cards of each kind the zone holds, not where they lie.
    """
    prog, st = match.program, match.state
    places = []
    bit = 1 << seat if memory else 0
    known = st.known
    for z, cards in enumerate(st.zones):
        info = prog.zone_info[z]
        owner = prog.zone_owner[z]
        whole_zone_hidden = info.hidden or (info.visible == "owner" and owner != seat)
        for pos, c in enumerate(cards):
            if known[c] & bit:
                continue
            if whole_zone_hidden or not can_see_card(prog, st, c, z, seat):
                places.append((z, pos, not whole_zone_hidden))
    return places


class Sampler:
    """Samples of one match for one seat. What a sample keeps (the hidden places, what the
    seat sees of each, the hidden cards by back) is read once here; each `sample` then only
    copies the state and draws: a search agent samples the same position many times per
    decision. The draws are the same, in the same order, as one `sample_state` per sample."""

    def __init__(self, match, seat: int, memory: bool = True):
        self.true = true = match.state
        self.prog = match.program
        backs = match.program.card_backs
        hidden = hidden_places(match, seat, memory)
        by_zone: dict = {}
        for z, pos, shown in hidden:
            by_zone.setdefault(z, []).append((pos, shown))
        # Per zone (in order): its hidden places, whether each shows its back, and the backs
        # of the places that do not (dealt among them by a shuffle).
        self.zones = []
        for z in sorted(by_zone):
            spots = by_zone[z]
            unseen = [pos for pos, shown in spots if not shown]
            labels = sorted(backs[true.zones[z][pos]] for pos in unseen)
            shown = {pos: backs[true.zones[z][pos]] for pos, seen in spots if seen}
            self.zones.append((z, spots, unseen, labels, shown))
        all_hidden = [true.zones[z][pos] for z, pos, _ in hidden]
        self.cards = {}
        for c in all_hidden:
            self.cards.setdefault(backs[c], []).append(c)
        for cards in self.cards.values():
            cards.sort()                # canonical: not where they really are
        # What the seat sees of each place stays: which way up its card lies, its turn, and
        # the card variables of whatever card lies there.
        self.place = {}
        for z, pos, _ in hidden:
            c = true.zones[z][pos]
            self.place[(z, pos)] = (true.faceup[c], true.turn[c], [row[c] for row in true.cvars])

    def sample(self, rng_state: int):
        """A copy of the match's state with the hidden cards dealt again; returns (state, rng)."""
        st = self.true.copy()
        # 1. The back each hidden place will show: seen on the table, or drawn from its zone's counts.
        groups: dict = {}
        for z, spots, unseen, labels, shown in self.zones:
            labels = labels[:]
            rng_state = R.shuffle(labels, rng_state)
            assigned = dict(zip(unseen, labels))
            for pos, seen in spots:
                groups.setdefault(shown[pos] if seen else assigned[pos], []).append((z, pos))
        # 2. Deal the hidden cards with each back among the places showing that back.
        zones, where, faceup, turn, cvars, known = st.zones, st.where, st.faceup, st.turn, st.cvars, st.known
        place, prog = self.place, self.prog
        see_up, see_down, backed = prog.see_up, prog.see_down, prog.card_backed
        for back in sorted(groups):
            places = groups[back]
            cards = self.cards[back][:]
            rng_state = R.shuffle(cards, rng_state)
            for k, zp in enumerate(places):
                c = cards[k]
                z, pos = zp
                zones[z][pos] = c
                where[c] = z
                up, turned, saved = place[zp]
                faceup[c] = up
                # ...and sideways or not, but which end points where is unknown.
                flip, rng_state = R.below(rng_state, 2)
                turn[c] = (turned + 180 * flip) % 360 if not up else turned
                for v, row in enumerate(cvars):
                    row[c] = saved[v]
                # Nobody knows a card dealt at random (the true state's knowledge is of other cards).
                known[c] = see_up[z] if up or backed[c] else see_down[z]       # knowledge.sight
        seed, rng_state = R.next_u64(rng_state)
        st.rng = R.seed_state(seed)
        return st, rng_state


def sample_state(match, seat: int, rng_state: int, memory: bool = True):
    """A copy of the match's state with the hidden cards dealt again; returns (state, rng)."""
    return Sampler(match, seat, memory).sample(rng_state)
