"""rulesvm games in OpenSpiel and PettingZoo (rulesvm.interop, docs/research.md): Kuhn poker
written in the rules language against OpenSpiel's own, solved by OpenSpiel's CFR; an OpenSpiel
MCTS bot through the interop; PettingZoo's own API and seed tests and random agents on every
game in games/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, expected_game_score, exploitability, mcts
from pettingzoo.test import api_test, seed_test

from rulesvm import api
from rulesvm.interop import openspiel as ros
from rulesvm.interop import pettingzoo as rpz
from rulesvm.interop.encoding import observation_string
from rulesvm.interpreter.state import Decision, Option

from .conftest import ROOT

KUHN = os.path.join(ROOT, "games", "kuhn_poker.yaml")
MACH = os.path.join(ROOT, "games", "mach_struggle.yaml")
LAUNCH_GAMES = sorted(os.path.join(ROOT, "games", f) for f in os.listdir(os.path.join(ROOT, "games"))
                      if f.endswith(".yaml"))
RANKS = {"Jack": 0, "Queen": 1, "King": 2}              # OpenSpiel's Kuhn poker deals cards 0, 1, 2
PASS_OR_BET = {"check": 0, "fold": 0, "bet": 1, "call": 1}  # its actions: 0 pass, 1 bet


@pytest.fixture(scope="module")
def kuhn():
    return ros.load(KUHN)


def test_importing_rulesvm_imports_no_research_package():
    code = ("import sys, rulesvm, rulesvm.api, rulesvm.interop, rulesvm.cli.main\n"
            "print(sorted(m for m in ('pyspiel', 'pettingzoo', 'gymnasium', 'open_spiel') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_kuhn_game_type(kuhn):
    t = kuhn.get_type()
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kuhn.num_players() == 2 and kuhn.min_utility() == -2 and kuhn.max_utility() == 2
    assert pyspiel.load_game(t.short_name).get_type().short_name == t.short_name    # registered


def _our_action(state, theirs: int) -> int:
    """Our action for OpenSpiel's Kuhn action `theirs` in the same position."""
    player = state.current_player()
    matches = [a for a in state.legal_actions()
               if (RANKS[state.match.decision.options[a].label] if player == pyspiel.PlayerId.CHANCE
                   else PASS_OR_BET[state.match.decision.options[state.play.ids[a]].label]) == theirs]
    assert len(matches) == 1, (str(state), theirs)
    return matches[0]


def _walk(ours, theirs, infosets: dict) -> int:
    """Both trees side by side from here: same players, legal actions, chance odds and returns;
    each of our information states is exactly one of theirs. Returns the terminals met."""
    assert ours.current_player() == theirs.current_player()
    if theirs.is_terminal():
        assert ours.is_terminal() and ours.returns() == theirs.returns()
        return 1
    assert not ours.is_terminal()
    if theirs.is_chance_node():
        got = sorted((RANKS[ours.match.decision.options[a].label], p) for a, p in ours.chance_outcomes())
        want = theirs.chance_outcomes()
        assert [o for o, _ in got] == [o for o, _ in want]
        assert [p for _, p in got] == pytest.approx([p for _, p in want])
    else:
        player = theirs.current_player()
        ours._action_ids()
        assert sorted(_mapped(ours, a) for a in ours.legal_actions()) == theirs.legal_actions()
        for p in range(2):
            infosets.setdefault(("ours", p, ours.information_state_string(p)), set()).add(
                theirs.information_state_string(p))
            infosets.setdefault(("theirs", p, theirs.information_state_string(p)), set()).add(
                ours.information_state_string(p))
        assert player == ours.current_player()
    terminals = 0
    for action in theirs.legal_actions():
        terminals += _walk(ours.child(_our_action(ours, action)), theirs.child(action), infosets)
    return terminals


def _mapped(ours, action: int) -> int:
    return PASS_OR_BET[ours.match.decision.options[ours.play.ids[action]].label]


def test_kuhn_matches_openspiel_kuhn_on_the_whole_tree(kuhn):
    infosets: dict = {}
    terminals = _walk(kuhn.new_initial_state(), pyspiel.load_game("kuhn_poker").new_initial_state(), infosets)
    assert terminals == 30                      # 6 deals x 5 betting sequences
    assert infosets and all(len(v) == 1 for v in infosets.values())   # the same information partition
    ours = {k for k in infosets if k[0] == "ours"}
    assert len(ours) == len(infosets) - len(ours)


def test_cfr_solves_kuhn_poker(kuhn):
    solver = cfr.CFRPlusSolver(kuhn)
    for _ in range(25):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    value = expected_game_score.policy_value(kuhn.new_initial_state(), [policy, policy])[0]
    assert value == pytest.approx(-1 / 18, abs=0.005)
    assert exploitability.exploitability(kuhn, policy) < 0.01


def test_information_state_holds_only_what_the_seat_knows(kuhn):
    """Player 1 holding the Queen cannot tell the Jack from the King in Player 2's hand."""
    states = []
    for second in ("Jack", "King"):
        s = kuhn.new_initial_state()
        for label in ("Queen", second):
            s.apply_action(next(a for a, _ in s.chance_outcomes() if s.match.decision.options[a].label == label))
        states.append(s)
    a, b = states
    assert a.information_state_string(0) == b.information_state_string(0)
    assert a.observation_tensor(0) == b.observation_tensor(0)
    assert a.information_state_tensor(0) == b.information_state_tensor(0)
    assert a.information_state_string(1) != b.information_state_string(1)
    assert a.observation_tensor(1) != b.observation_tensor(1)


def test_secret_choices_stay_secret():
    """Mach Struggle's plans are set in secret, one after the other: Player 2, choosing, sees
    the same whichever plan Player 1 set."""
    game = ros.load(MACH)
    seen = set()
    for pick in (0, 5):
        state = game.new_initial_state()
        rolls = 0
        while state.is_chance_node():       # the two dice of the initial leader: 1, then 2
            state.apply_action(state.chance_outcomes()[rolls][0])
            rolls += 1
        first = state.current_player()
        state.apply_action(state.legal_actions()[pick])
        assert state.current_player() == 1 - first
        seen.add((state.information_state_string(1 - first), tuple(state.observation_tensor(1 - first))))
    assert len(seen) == 1


def test_action_ids_are_the_same_in_every_state(kuhn):
    state = kuhn.new_initial_state()
    state.apply_action(0)
    state.apply_action(0)
    check, bet = sorted(state.legal_actions(), key=kuhn.describe_action)[::-1]
    assert (kuhn.describe_action(check), kuhn.describe_action(bet)) == ('text:"check"', 'text:"bet"')
    after_check = state.child(check)
    assert bet in after_check.legal_actions()            # Player 2's "bet" is the same id as Player 1's
    fold, call = sorted(after_check.child(bet).legal_actions(), key=kuhn.describe_action)[::-1]
    assert kuhn.describe_action(fold) == 'text:"fold"' and kuhn.describe_action(call) == 'text:"call"'
    assert len({check, bet, fold, call}) == 4


def test_openspiel_consistency_checks():
    """OpenSpiel's own random-simulation test of a game implementation (clones, tensors, returns)."""
    for path in (KUHN, MACH):
        pyspiel.random_sim_test(ros.load(path), num_sims=3, serialize=False, verbose=False)


def test_mcts_bot_plays_mach_struggle_to_the_end():
    game = ros.load(MACH)
    rng = np.random.RandomState(3)
    bot = mcts.MCTSBot(game, 2.0, 20, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    result = state.match.result
    assert result["winner"] in (1, 2) and max(state.returns()) == 6.0


def test_sampled_chance_gives_each_new_game_its_own_deal():
    game = ros.load(KUHN, explicit_chance=False, seed=5)
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    deals = {observation_string(game.new_initial_state().match.observation(-1)) for _ in range(12)}
    assert len(deals) > 1 and not game.new_initial_state().is_chance_node()
    state = game.new_initial_state()
    twin = state.clone()                    # a clone is the same game, and starts none
    assert str(twin) == str(state) and twin.play.seed == state.play.seed == 5 + 13
    assert game.new_initial_state().play.seed == 5 + 14


# PettingZoo's api_test warns about any Dict observation (its own classic games' kind, with an
# action mask): nothing to fix here.
@pytest.mark.filterwarnings("ignore:Observation space for each agent:UserWarning",
                            "ignore:Observation is not a NumPy array:UserWarning")
@pytest.mark.parametrize("path", LAUNCH_GAMES, ids=lambda p: os.path.basename(p))
def test_pettingzoo_api_and_seed_tests(path):
    api_test(rpz.env(path), num_cycles=300)
    seed_test(lambda: rpz.env(path), num_cycles=100)


@pytest.mark.parametrize("path", LAUNCH_GAMES, ids=lambda p: os.path.basename(p))
def test_pettingzoo_random_agents_play_to_the_end(path):
    env = rpz.env(path)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        assert obs["observation"].shape == env.observation_space(agent)["observation"].shape
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        steps += 1
    match = env.match
    assert match.is_over and steps == match.decisions_made and not env.agents
    returns = env.environment.returns_of(match.result)
    assert [env._cumulative_rewards.get(a, r) for a, r in zip(env.possible_agents, returns)] == returns


def test_pettingzoo_refuses_an_illegal_action():
    env = rpz.env(KUHN)
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(ValueError, match="is not legal"):
        env.step(int(np.flatnonzero(mask == 0)[0]))


def test_action_blocks_cards_hidden_cards_values_and_the_rest(kuhn):
    """A decision offering, to Player 1: its own card, the hidden third card, a surveyed value,
    a value never met, and that value again."""
    env = kuhn.new_initial_state().env
    match = api.new_game(env.game, 2, 3)              # the engine deals (explicit chance off)
    prog, st = env.game.program, match.state
    own = st.zones[prog.zone_index("hand", 0)][0]
    hidden = st.zones[prog.zone_index("deck")][0]
    cards = Decision(0, "?", (Option("own", own), Option("hidden", hidden)), value_type="card")
    texts = Decision(0, "?", (Option("b", "bet"), Option("x", "raise"), Option("y", "raise")), value_type="text")
    space = env.actions
    assert space.actions(SimpleNamespace(decision=cards, state=st), 0) == [1 + own, space.hidden_base]
    assert space.actions(SimpleNamespace(decision=cards, state=st), -1)[1] == 1 + hidden   # seat -1 sees all
    assert space.actions(SimpleNamespace(decision=texts, state=st), 0) == [
        space.value_base + space.values.index('text:"bet"'), space.other_base, space.other_base + 1]
    assert kuhn.describe_action(space.hidden_base) == "face-down card 1"
    assert kuhn.describe_action(space.other_base + 1) == "other option 2"


def test_info_actions_shows_the_numbering():
    cli = [sys.executable, "-m", "rulesvm.cli.main", "info", KUHN, "--actions"]
    out = subprocess.run(cli, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert '22: text:"check"' in out.stdout and "4-19: the k-th card option the seat does not know" in out.stdout
    data = json.loads(subprocess.run(cli + ["--json"], cwd=ROOT, capture_output=True, text=True).stdout)
    assert {v["id"]: v["action"] for v in data["values"]} == {20: 'text:"bet"', 21: 'text:"call"',
                                                              22: 'text:"check"', 23: 'text:"fold"'}
    assert data["observation"]["size"] == 32
    bad = subprocess.run(cli + ["--players", "3"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "is for 2 players, not 3" in bad.stderr
