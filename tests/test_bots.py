"""The generic bots: they never see what their seat may not, they are reproducible, and
they are real (they beat the random bot by a statistically significant margin)."""

from __future__ import annotations

import json
import os

import pytest

from rulesvm import api
from rulesvm.interpreter.agents import SeatView, make_agent, split_agent_list
from rulesvm.interpreter.agents.determinize import sample_state
from rulesvm.interpreter.rng import derive
from rulesvm.analysis.stats import binomial_tail

from .conftest import ROOT, load

GK = os.path.join(ROOT, "games", "giant_king.yaml")
MS = os.path.join(ROOT, "games", "mach_struggle.yaml")
BF = os.path.join(ROOT, "games", "birthdays_fight.yaml")


def _swap_hidden(match, seat):
    """Swap two cards the seat cannot see (same kind): the hands of two other players, and
    the order of the hidden recruit deck."""
    prog, st = match.program, match.state
    hand = st.zones[prog.zone_index("hand", (seat + 1) % match.players)]
    other = st.zones[prog.zone_index("hand", (seat + 2) % match.players)]
    a = next(c for c in hand if prog.card_kinds[c] == "start")
    b = next(c for c in other if prog.card_kinds[c] == "start")
    ia, ib = hand.index(a), other.index(b)
    hand[ia], other[ib] = b, a
    st.where[a], st.where[b] = st.where[b], st.where[a]
    recruit = st.zones[prog.zone_index("recruit")]
    recruit.reverse()


@pytest.mark.parametrize("spec", ["greedy", "mcts:iterations=20,depth=30"])
def test_bots_cannot_see_hidden_cards(spec):
    game = load(GK)
    base = api.new_game(game, 4, 11)
    base.apply(0)
    twin = base.clone()
    seat = base.current_player
    _swap_hidden(twin, seat)
    assert json.dumps(base.state.zones) != json.dumps(twin.state.zones)
    assert base.observation(seat) == twin.observation(seat)
    a = make_agent(spec, 5).choose(SeatView(base, seat))
    b = make_agent(spec, 5).choose(SeatView(twin, seat))
    assert a == b
    # The samples a bot searches are identical too.
    sa, _ = sample_state(base, seat, 99)
    sb, _ = sample_state(twin, seat, 99)
    assert sa.zones == sb.zones and sa.rng == sb.rng


def test_samples_keep_what_the_seat_sees():
    game = load(GK)
    match = api.new_game(game, 4, 3)
    seat = match.current_player
    sample, _ = sample_state(match, seat, 7)
    assert match.with_state(sample).observation(seat) == match.observation(seat)
    assert sample.zones != match.state.zones           # hidden cards were dealt again


@pytest.mark.parametrize("spec", ["greedy", "mcts:iterations=15"])
def test_bots_are_reproducible(spec):
    game = load(MS)
    results = []
    for _ in range(2):
        match = api.new_game(game, 2, 4)
        agents = {0: make_agent(spec, 1), 1: make_agent("random", 2)}
        results.append((api.play(match, agents), match.decisions_made))
    assert results[0] == results[1]


def test_agent_list_parsing():
    assert split_agent_list("mcts:iterations=40,depth=60,random") == ["mcts:iterations=40,depth=60", "random"]
    assert split_agent_list("greedy, random") == ["greedy", "random"]


def _duel(path, spec, games, players):
    """Games won by `spec` against random bots, rotating its seat."""
    game = load(path)
    wins = 0
    for g in range(games):
        seat = g % players
        agents = {s: make_agent(spec if s == seat else "random", derive(g, s)) for s in range(players)}
        result = api.play(api.new_game(game, players, 1000 + g), agents)
        wins += result.get("winner") == seat + 1
    return wins


@pytest.mark.parametrize("path,spec,games,players", [
    (MS, "greedy", 16, 2),
    (MS, "mcts:iterations=40", 12, 2),
    (BF, "greedy", 16, 2),
    (BF, "mcts:iterations=20,depth=20", 12, 2),
    (GK, "greedy:horizon=2", 40, 4),
    (GK, "mcts:iterations=40,depth=20", 12, 4),
])
@pytest.mark.slow
def test_bots_beat_random(path, spec, games, players):
    wins = _duel(path, spec, games, players)
    p = binomial_tail(wins, games, 1 / players)
    assert p < 0.05, f"{spec} won {wins}/{games} (p = {p:.3f})"


@pytest.mark.slow
def test_search_bot_survives_the_solo_ufo_game_more_often_than_random():
    """Solo games: the search bot's outcomes against the random bot's on the same seeds
    (UFO cow abduction: a game either completes with a score or ends in game over, 0).

    The greedy bot, not MCTS: since an abduction may be chosen with cows and no UFO over
    them (issue 24 item 12), random playouts send decoys to the hangar so often that
    mcts:iterations=30 completes 1 of these 12 games (5 before), and more iterations run
    past the simulation's per-game timeout; greedy completes 5."""
    from rulesvm.analysis.simulate import SimConfig, simulate
    ufo = os.path.join(ROOT, "games", "ufo_abduction.yaml")
    base = simulate(SimConfig(ufo, n=200, seed=1))
    rate = base["outcomes"].get("completed", 0) / 200
    bot = simulate(SimConfig(ufo, n=12, seed=1, agents=("greedy",), chunk=6), jobs=2)
    done = bot["outcomes"].get("completed", 0)
    assert 0 < rate < 0.3
    p = binomial_tail(done, 12, rate)
    assert p < 0.05, f"greedy completed {done}/12 games, random {rate:.3f} (p = {p:.3f})"


def _score_moments(summary) -> tuple[float, float, int]:
    pairs = summary["score_histograms"][0]
    n = sum(c for _, c in pairs)
    mean = sum(s * c for s, c in pairs) / n
    return mean, sum(c * (s - mean) ** 2 for s, c in pairs) / (n - 1), n


@pytest.mark.slow
def test_mcts_scores_higher_than_random_in_alien_attack():
    """Solo Alien Attack: random play almost never wins, so compare scores (damaged
    mothership sections and cannon levels). MCTS playouts are cut at `depth` and judged by
    the game's `evaluate`."""
    from rulesvm.analysis.simulate import SimConfig, simulate
    from rulesvm.analysis.stats import welch_p
    aa = os.path.join(ROOT, "games", "alien_attack.yaml")
    base = _score_moments(simulate(SimConfig(aa, n=200, seed=1)))
    # Short playouts judged by `evaluate` play better here than long ones, and cost less
    # (depth 6: mean score 22 over these 10 games, p = 0.003; depth 12 needed 16 games and
    # eight times the time). A game takes up to 10 s; a loaded machine must not drop one at
    # the default 60 s limit (the games counted, and so the result, would depend on the load).
    bot = _score_moments(simulate(SimConfig(aa, n=10, seed=1, agents=("mcts:iterations=20,depth=6",), chunk=2,
                                            game_timeout=600), jobs=2))
    p = welch_p(*bot, *base)
    assert bot[0] > base[0] and p < 0.05, f"mcts mean score {bot[0]:.1f}, random {base[0]:.1f} (p = {p:.3f})"


def test_mcts_playouts_are_as_long_as_the_game_file_says():
    """Default playouts: the game file's `bots: playout:` (Mach Struggle's is 5: its
    `evaluate` judges the cut position), to the end in a game without one (UFO); an explicit
    `depth` always wins."""
    from rulesvm.interpreter.agents.search import FULL_PLAYOUT, playout_depth
    ms = api.new_game(load(MS), 2, 0)
    ufo = api.new_game(load(os.path.join(ROOT, "games", "ufo_abduction.yaml")), 1, 0)
    assert ms.program.model.bots == {"playout": 5} and ufo.program.model.bots == {}
    assert playout_depth(None, ms) == 5 and playout_depth(None, ufo) == FULL_PLAYOUT
    assert playout_depth(60, ms) == 60 == playout_depth(60, ufo)


def test_sampler_draws_the_same_samples_as_one_sample_state_per_sample():
    """A search agent reads the hidden places once per decision (Sampler) and samples many
    times: the samples are those of sample_state, draw for draw."""
    from rulesvm.interpreter.agents.determinize import Sampler
    match = api.new_game(load(GK), 4, 3)
    for i in range(6):
        match.apply(i % len(match.legal_options))
    seat = match.current_player
    sampler = Sampler(match, seat)
    state = 5
    for _ in range(5):
        a, next_a = sample_state(match, seat, state)
        b, next_b = sampler.sample(state)
        assert next_a == next_b
        assert (a.zones, a.where, a.faceup, a.turn, a.cvars, a.rng) == (b.zones, b.where, b.faceup, b.turn, b.cvars, b.rng)
        state = next_a
