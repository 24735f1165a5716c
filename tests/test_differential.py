"""Differential test: the interpreted games against hand-written Python references.

benchmarks/reference/ holds Giant King and Mach Struggle written directly in Python, with
the same rules, interpretations, random draws and decisions as games/*.rules. For 1,000
seeds of each configuration, the reference and the interpreter play side by side: at
every decision both must ask the same player the same prompt with the same option labels
in the same order; both then receive the same seeded random option index; at the end both
must report the same result. A disagreement is either a reference bug or an interpreter
bug (a wrong optimisation, a changed primitive): the message names the seed and the
decision so it can be replayed.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from rulesvm import api
from rulesvm.interpreter import compile_program
from rulesvm.interpreter.rng import below, derive

from benchmarks.reference import giant_king, giant_king_literal, mach_struggle, mach_struggle_literal

from .conftest import GAMES_DIR, load

REFERENCES = {"giant_king": giant_king, "mach_struggle": mach_struggle}
GAMES = 1000          # seeds per configuration
CHUNK = 250           # seeds per test (keeps each test short, lets failures show where)


def play_both(program, reference, players: int, seed: int) -> tuple[list, dict]:
    """Play one game both ways; returns the decisions (player, prompt, labels) and the result.

    Fails at the first difference, with the seed, the decision number and the choices so far.
    """
    match = api.Match(program, players, seed)
    ref = reference.Game(players, seed)
    state = derive(seed, 7)                      # the choices' own generator
    seen, chosen = [], []

    def where(what: str) -> str:
        return (f"{program.model.id}, {players} players, seed {seed}, decision {len(seen) + 1}: {what}\n"
                f"choices so far (option indexes): {chosen}")

    while True:
        d, r = match.decision, ref.decision
        if d is None or r is None:
            assert d is None and r is None, where(
                f"only one side has ended\ninterpreter: {d and (d.player, d.prompt, d.labels)}\n"
                f"reference:   {r and (r.player, r.prompt, [o.label for o in r.options])}")
            break
        asked = (d.player, d.prompt, [o.label for o in d.options])
        expected = (r.player, r.prompt, [o.label for o in r.options])
        assert asked == expected, where(f"different decisions\ninterpreter: {asked}\nreference:   {expected}")
        i, state = below(state, len(asked[2]))
        seen.append(asked)
        chosen.append(i)
        match.apply(i)
        ref.apply(i)
    assert match.result == ref.result, where(f"different results\ninterpreter: {match.result}\n"
                                             f"reference:   {ref.result}")
    return seen, match.result


def _configs():
    for gid, players in (("giant_king", 4), ("giant_king", 3), ("mach_struggle", 2)):
        for start in range(0, GAMES, CHUNK):
            yield pytest.param(gid, players, start, id=f"{gid}-{players}p-seeds{start}-{start + CHUNK - 1}")


GIANT_KING_PROMPTS = ("Play a card", "Arrange your row", "Joker: which number does it count as?",
                      "Take a reward card")


def assert_every_giant_king_decision(prompts: Counter, games: int) -> None:
    """The random choices reached every kind of Giant King decision (else a comparison proves
    little): each prompt, and the recruit card revealed to a lone player (its own prompt)."""
    for prompt in GIANT_KING_PROMPTS:
        assert prompts[prompt] > 0, f"no `{prompt}` decision in {games} games"
    assert sum(k for p, k in prompts.items() if p not in GIANT_KING_PROMPTS), "no recruit card revealed to a lone player"


@pytest.mark.parametrize("gid,players,start", list(_configs()))
def test_reference_and_interpreter_agree(gid, players, start):
    game = load(os.path.join(GAMES_DIR, f"{gid}.yaml"))
    reference = REFERENCES[gid]
    prompts = Counter()
    winners = Counter()
    for seed in range(start, start + CHUNK):
        seen, result = play_both(game.program, reference, players, seed)
        prompts.update(prompt.split(" (")[0] for _, prompt, _ in seen)
        winners[result["winner"]] += 1
    # The random choices must reach every kind of decision, or the comparison proves little.
    if gid == "giant_king":
        assert_every_giant_king_decision(prompts, CHUNK)
    else:
        assert set(prompts) == {"Set your aim and the maneuvers of rounds 1-3",
                                "Leader: lay one maneuver sideways to roll?"}
    assert set(winners) == set(range(1, players + 1))


@pytest.mark.parametrize("gid,players", [("giant_king", 4), ("mach_struggle", 2)])
def test_closure_backend_agrees_too(gid, players):
    """The plain-closure back end (RULESVM_CODEGEN=0) against the reference, on fewer seeds."""
    game = load(os.path.join(GAMES_DIR, f"{gid}.yaml"))
    program = compile_program(game.model, game.options, codegen=False)
    for seed in range(GAMES, GAMES + 100):
        play_both(program, REFERENCES[gid], players, seed)


def test_literal_translation_plays_the_same_game():
    """benchmarks/reference/mach_struggle_literal.py (the rules script translated statement by
    statement, which the benchmark times to split the ratio) plays the interpreted game too."""
    game = load(os.path.join(GAMES_DIR, "mach_struggle.yaml"))
    winners = Counter()
    for seed in range(GAMES):
        winners[play_both(game.program, mach_struggle_literal, 2, seed)[1]["winner"]] += 1
    assert set(winners) == {1, 2}


@pytest.mark.parametrize("players", [4, 3])
def test_giant_king_literal_translation_plays_the_same_game(players):
    """benchmarks/reference/giant_king_literal.py (games/giant_king.rules translated statement
    by statement) plays the interpreted game too: 1,000 games, half with each player count."""
    game = load(os.path.join(GAMES_DIR, "giant_king.yaml"))
    prompts = Counter()
    winners = Counter()
    for seed in range(GAMES // 2):
        seen, result = play_both(game.program, giant_king_literal, players, seed)
        prompts.update(prompt.split(" (")[0] for _, prompt, _ in seen)
        winners[result["winner"]] += 1
    assert_every_giant_king_decision(prompts, GAMES // 2)
    assert set(winners) == set(range(1, players + 1))
