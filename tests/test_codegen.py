"""The generated back end's shortcuts mean exactly what the closures mean.

`interpreter/pysource.py` writes small functions inline, indexes zones and lists inline,
pastes blocks, calls, decisions and abilities into a procedure's runner, runs callees from
the caller's runner, and moves cards without building events when nobody listens. Each
shortcut is checked here against the plain closures (`codegen=False`): on a game built to
hit them, with and without a listener, and on the errors they must word the same way.
"""

from __future__ import annotations

import json
import re

import pytest

from rulesvm import api
from rulesvm.interpreter import compile_program
from rulesvm.interpreter.errors import RulesRuntimeError
from rulesvm.interpreter.state import state_to_json

from .conftest import game_files
from .helpers import random_playout, write_game

CARDS = "\n".join(f"- {{id: c{k}, kind: token, number: {k}, power: {'ask' if k % 3 == 0 else 'bump'}}}"
                  for k in range(1, 9))

RULES = """
kind token { number: int; power: ability }
zone deck: ordered, visible(all)
zone hand: per_player, visible(owner)
zone row: per_player, ordered, visible(all)
zone bin: visible(all), faceup
zone pile: ordered, visible(all)
var total: int = 0
var depth: int = 0
var played: int = 0, per_player

func twice(x: int) -> int = x + x
func top_number(p: player) -> int = if count(hand(p)) == 0 then 0 else hand(p)[-1].number
func sum_of(a: int, b: int) -> int = a + b
func pick_second(xs: list[int]) -> int = xs[1]

ability bump {
  you.played += 1
}

ability ask {
  let k = choose([1, 2], by: you, prompt: "Ability: how many?")
  you.played += k
}

proc deeper(n: int) {
  depth = max([depth, n])
  if n > 0 { deeper(n - 1) }
}

proc tally(p: player) {
  total += p.played
}

proc take(p: player) {
  let c = choose(hand(p), by: p, prompt: "Play", pass: if count(row(p)) > 0 then "Stop" else none,
                 label: c => "{c} ({twice(c.number)})")
  if c == none { return }
  move(c, row(p), face: "up")
  count_play(p)
}

proc count_play(p: player) {
  p.played += 1
  let c = top(row(p))
  use(c.power, c, p)
}

setup {
  move(box, deck, face: "down")
  shuffle(deck)
  for p in players {
    draw(deck, hand(p), 3, face: "up")
  }
}

game {
  deeper(60)
  for r in 1..2 {
    for p in players {
      take(p)
      # Inlined functions with arguments that are not simple, inside comprehensions too.
      total += sum_of(twice(r), top_number(p))
      total += count([c for c in hand(players[sum_of(0, 0)]) if c.number > twice(r - 1)])
      total += pick_second([sum_of(r, 1), twice(r), 7])
      total += count([c for c in deck + hand(p) + row(p) if c.number > 2]) + count(hand(p) + row(p))
      let first_card = first([c for c in row(p) if c.number >= 0])
      if first_card != none { total += first_card.number }
      total += clamp(total, 0, 50) - clamp(total, 0, 50)
      tally(p)
    }
  }
  for p in players {
    move(row(p), pile, face: "down")
    move(hand(p), pile, at: "bottom", face: "up")
    move(pile, row(p))
    move(row(p), bin)
  }
  move(deck, bin, face: "down")
  end_game(scores: [q.played * 100 + total + depth for q in players])
}
"""


def _programs(path):
    game = api.load_game(path)
    return (compile_program(game.model, game.options, codegen=True),
            compile_program(game.model, game.options, codegen=False))


def _play(program, players, seed, listen: bool, knowledge: bool = True):
    lines = []
    sink = (lambda r: lines.append(json.dumps(r, sort_keys=True))) if listen else None
    match = api.Match(program, players, seed, sink=sink, knowledge=knowledge)
    choices = random_playout(match, seed)
    return lines, choices, match.result, json.dumps(state_to_json(match.state), sort_keys=True)


@pytest.fixture()
def shortcut_game(tmp_path):
    return write_game(tmp_path, RULES, players="{min: 2, max: 3, default: 2}", cards=CARDS)


def _outcome(program, players, seed, listen: bool, knowledge: bool = True):
    """Choices, result and final state of a seeded random game (no event log)."""
    return _play(program, players, seed, listen, knowledge)[1:]


@pytest.mark.parametrize("listen", [True, False], ids=["listener", "no listener"])
def test_shortcuts_play_like_the_closures(shortcut_game, listen):
    generated, closures = _programs(shortcut_game)
    # The generated code really takes the shortcuts this game is written to reach.
    source = "\n".join(generated.sources)
    assert ":=" in source and "rt.move_card(" in source and "rt.move_zone(" in source and "].remove(" in source
    assert ".runner(rt, _f)" in source and "_u.direct(rt" in source and re.search(r"_pb\d+\(rt, \[", source) and re.search(r"\(\*st.zones\[1\], \*st.zones\[", source)
    for players in (2, 3):
        for seed in range(8):
            assert _play(generated, players, seed, listen) == _play(closures, players, seed, listen)


def test_cheap_moves_leave_the_state_the_general_moves_leave(shortcut_game):
    """Without a listener, moves skip building events (and, when no knowledge is kept either,
    only change lists: Runtime.plain_moves); with one they take the general path
    (`Runtime.move`): both must leave the same cards, faces and places."""
    for program in _programs(shortcut_game):
        for players in (2, 3):
            for seed in range(8):
                assert _outcome(program, players, seed, False) == _outcome(program, players, seed, True)
                assert _outcome(program, players, seed, False, False) == _outcome(program, players, seed, True, False)


@pytest.mark.parametrize("path", game_files(), ids=lambda p: p.rsplit("/", 1)[-1])
def test_launch_games_without_a_listener_end_in_the_same_state(path):
    """The same oracle on every launch game, for both back ends."""
    generated, closures = _programs(path)
    players = api.load_game(path).model.players[2]
    for seed in range(3):
        general = _outcome(closures, players, seed, True)
        assert _outcome(generated, players, seed, False) == general
        assert _outcome(closures, players, seed, False) == general
        unknowing = _outcome(closures, players, seed, True, knowledge=False)
        assert _outcome(generated, players, seed, False, knowledge=False) == unknowing


ERRORS = {
    "zone index past the end": ("hand(player(1))[5].number", "R009", "index 5 is outside the zone (3 cards)"),
    "negative zone index": ("hand(player(1))[-4].number", "R009", "index -4 is outside the zone (3 cards)"),
    "list index past the end": ("[1, 2][2]", "R009", "index 2 is outside the list (2 items)"),
    "index of none": ("nothing()[0]", "R009", "cannot index none"),
    "index of a none tuple": ("no_pair()[0]", "R009", "cannot index none"),
    "seat that does not exist": ("player(3).played", "R012", "there is no seat 3 in a 2-player game"),
    "opponent with three seats": ("if player_count == 2 then 0 else opponent(player(1)).played", "R012",
                                  "`opponent` needs a two-player game"),
    "inlined function reading past the end": ("pick([5])", "R009", "index 1 is outside the list (1 items)"),
    "move to none": ("moved()", "R008", "`move` to none"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_worded_the_same_by_both_back_ends(tmp_path, name):
    expr, code, message = ERRORS[name]
    rules = f"""
kind token {{ number: int; power: ability }}
ability bump {{ }}
ability ask {{ }}
zone hand: per_player, visible(owner)
var where: zone = none
var played: int = 0, per_player
func nothing() -> list[int] = none
func no_pair() -> tuple[int, text] = none
func pick(xs: list[int]) -> int = xs[1]
func moved() -> int = 0
game {{
  move([c for c in box if c.number <= 3], hand(player(1)))
  let c = first([c for c in box])
  let unused = if false then pick([1, 2]) + count(nothing()) + moved() else 0
  if "{name}" == "move to none" {{ move(c, where) }}
  let v = {expr}
  end_game(scores: [v for p in players])
}}
"""
    path = write_game(tmp_path, rules, players="{min: 2, max: 3, default: 2}", cards=CARDS)
    seen = []
    for program in _programs(path):
        players = 3 if "three" in name else 2
        with pytest.raises(RulesRuntimeError) as info:
            api.Match(program, players, 0)
        assert (info.value.code, info.value.message) == (code, message)
        seen.append(str(info.value.span))
    assert seen[0] == seen[1]       # the same position too


def test_a_log_line_that_rolls_dice_rolls_them_whether_or_not_anyone_listens(tmp_path):
    """Log text is built only for a listener, except when building it draws random numbers:
    the game must not depend on whether it is logged (found by `fuzz_campaign --backends`)."""
    rules = """
func dice() -> int = roll(6) + roll(6)
var total: int = 0
game {
  log("rolled {roll(6)}")
  log("and {dice()}", to: player(1))
  log("quietly {total}")
  total = roll(6)
  end_game(scores: [total])
}
"""
    path = write_game(tmp_path, rules)
    for program in _programs(path):
        for seed in range(20):
            quiet = api.Match(program, 1, seed).result
            heard = []
            logged = api.Match(program, 1, seed, sink=heard.append).result
            assert quiet == logged
            assert [r["text"].split()[0] for r in heard if r["type"] == "log"] == ["rolled", "and", "quietly"]


# A phase that never pauses (`score_round`) is run as a plain call when no breakpoint is
# set; `end_game` deep inside procedures that never pause unwinds everything at once.
QUIET_PHASES = """
var rounds: int = 0
var after_end: int = 0
var score: int = 0, per_player

proc maybe_end(r: int) {
  if r == 3 {
    end_game(scores: [p.score for p in players])
    after_end = 1
  }
}

phase score_round(r: int) {
  for p in players {
    p.score += r
    maybe_end(r)
    after_end += 10
  }
  log("round {r} scored")
}

phase ask(p: player) {
  let k = choose([1, 2], by: p, prompt: "How many?")
  p.score += k
}

game {
  loop {
    rounds += 1
    for p in players { ask(p) }
    score_round(rounds)
    log("after round {rounds}")
  }
}
"""


@pytest.fixture()
def quiet_phases(tmp_path):
    return write_game(tmp_path, QUIET_PHASES, players=2)


def test_phase_that_never_pauses_runs_without_a_frame(quiet_phases):
    generated, closures = _programs(quiet_phases)
    assert generated.procs["score_round"].body is not None and generated.procs["ask"].body is None
    source = "\n".join(generated.sources)
    assert re.search(r"if rt.breakpoint is None:\n.*coverage\['score_round'\] = .*\n\s+_pb\d+\(rt, _v", source)
    for program in (generated, closures):
        for listen in (True, False):
            lines, choices, result, state = _play(program, 2, 5, listen)
            # Player 2 never scores round 3: the game ended at player 1's turn in it.
            assert len(choices) == 6 and result["scores"] == {"1": 6 + sum(c + 1 for c in choices[0::2]),
                                                               "2": 3 + sum(c + 1 for c in choices[1::2])}
            # end_game stopped everything: nothing after it in maybe_end, score_round or game.
            vars_ = json.loads(state)["gvars"]
            assert vars_ == [3, 40]            # rounds; after_end: 2 players x 2 rounds x 10
            if listen:
                texts = [json.loads(x).get("text") for x in lines]
                assert "round 2 scored" in texts and "round 3 scored" not in texts
                assert texts.index("after round 2") > texts.index("round 2 scored")
                assert json.loads(lines[-1])["type"] == "end"
        assert _play(program, 2, 5, True)[1:] == _play(closures, 2, 5, True)[1:]


@pytest.mark.parametrize("codegen", [True, False], ids=["generated", "closures"])
def test_breakpoint_still_stops_at_a_phase_that_never_pauses(quiet_phases, codegen):
    game = api.load_game(quiet_phases)
    program = compile_program(game.model, game.options, codegen=codegen)
    plain = api.Match(program, 2, 1)
    random_playout(plain, 1)
    match = api.Match(program, 2, 1, breakpoint=("score_round", 2))
    for _ in range(4):
        assert not match.paused
        match.apply(0)
    assert match.paused and match.decision is None
    assert match.current_phases() == ["score_round"] and match.state.gvars[0] == 2
    match.resume()
    assert match.decision is not None and match.decision.prompt == "How many?"
    # Played on from here with the same choices, the game ends as the one never stopped.
    rest = api.Match(program, 2, 1)
    coverage = {}
    covered = api.Match(program, 2, 1, coverage=coverage)
    for m in (rest, covered):
        random_playout(m, 1)
    assert rest.result == plain.result == covered.result
    assert coverage["score_round"] == 3 and coverage["ask"] == 6


FACES_CARDS = """
- {id: a, kind: ship, hull: 1, faces: {back: {hull: 3}, back 180: {hull: 2}, front 90: {hull: 5}}}
- {id: b, kind: ship, hull: 7}
- {id: c, kind: ship, hull: 4, faces: {front 270: {hull: 6}}}
"""

FACES_RULES = """
kind ship { hull: int }
zone deck: ordered, visible(all)
var total: int = 0
func hulls() -> list[int] = [c.hull for c in deck]
game {
  move(box, deck, face: "up")
  for t in [0, 90, 180, 270] {
    for up in [true, false] {
      for c in deck {
        set_turn(c, if t == 0 then 0 else if t == 90 then 90 else if t == 180 then 180 else 270)
        if up { face_up(c) } else { face_down(c) }
      }
      log("{t} {up}: {hulls()} {deck[0].hull} {[c.hull for c in slice(deck, 1, 3)]} {[x for x in [deck[2].hull, 0]]}")
      total = total * 3 + sum(hulls()) + deck[2].hull
    }
  }
  let k = choose([90, 45, 0], by: player(1), prompt: "Turn")
  set_turn(deck[0], k)
  let missing = first([c for c in deck if c.hull > 100])
  let which = choose(["up", "down", "turn", "fine"], by: player(1), prompt: "Which")
  if which == "up" { face_up(missing) }
  if which == "down" { face_down(missing) }
  if which == "turn" { set_turn(missing, 90) }
  end_game(scores: [total + deck[0].hull])
}
"""


def test_faces_and_card_actions_inline_like_the_closures(tmp_path):
    """Face-dependent fields read from a table of the 8 ways a card lies, and face_up /
    face_down / set_turn written as stores when nobody listens, give what the closures give:
    values, errors (a missing card, a turn of 45 degrees) and events."""
    path = write_game(tmp_path, FACES_RULES, players=1, cards=FACES_CARDS)
    generated, closures = _programs(path)
    source = "\n".join(generated.sources)
    assert "// 90 + (0 if st.faceup[" in source and "st.turn[_c" in source and "st.faceup[_c" in source

    def play(program, turn, which, listen):
        lines = []
        match = api.Match(program, 1, 0, sink=lines.append if listen else None)
        try:
            match.apply(turn)
            match.apply(which)
        except RulesRuntimeError as exc:
            return exc.code, exc.message, str(exc.span), lines
        return match.result, state_to_json(match.state)["turn"], lines

    outcomes = set()
    for turn in range(3):
        for which in range(4):
            for listen in (True, False):
                got = play(generated, turn, which, listen)
                assert got == play(closures, turn, which, listen)
                outcomes.add(got[0] if isinstance(got[0], str) else "ok")
    assert outcomes == {"ok", "R008", "R014"}
    logs = [r["text"] for r in play(generated, 0, 3, True)[-1] if r["type"] == "log"]
    assert logs == ["0 true: 1, 7, 4 1 7, 4 4, 0", "0 false: 3, 7, 4 3 7, 4 4, 0",
                    "90 true: 5, 7, 4 5 7, 4 4, 0", "90 false: 3, 7, 4 3 7, 4 4, 0",
                    "180 true: 1, 7, 4 1 7, 4 4, 0", "180 false: 2, 7, 4 2 7, 4 4, 0",
                    "270 true: 1, 7, 6 1 7, 6 6, 0", "270 false: 3, 7, 6 3 7, 6 6, 0"]


OWN_FRAME_RULES = """
kind token { number: int; power: ability }
ability bump { }
zone hand: per_player, visible(owner), ordered
var played: int = 0, per_player
var total: int = 0

func best(p: player) -> int = max([c.number for c in hand(p) if c.number > 0], default: 0)
func sorted_numbers(p: player) -> list[int] = [c.number for c in sorted(hand(p), key: c => -c.number)]

proc deal() {
  for p in players {
    move([c for c in box if c.number % player_count == p.seat - 1], hand(p), face: "up")
    p.played += best(p)
    let q = player(1)
    q.played += 1
    let r = if p == player(1) then p else player(1)
    r.played += count(hand(p))
    total += sorted_numbers(p)[0]
  }
}

proc blank(p: player) {
  for p2 in players {
    p2 = if p2 == p then none else p2
    if p2 != none { p2.played += 1 }
  }
  for p3 in players {
    p3 = none
    p3.played += 1
  }
}

game {
  deal()
  let n = choose([1, 2], by: player(1), prompt: "How many?")
  total += n
  if n == 2 { blank(player(2)) }
  end_game(scores: [q.played + total for q in players])
}
"""


def test_a_short_walk_is_tested_inline_only_where_a_zone_may_hold_64_cards(tmp_path):
    """Once per statement, a comprehension over a zone is free when short. With 64 cards or
    more its length is tested inline (a long one charged, limits.charge_long); with fewer, no
    zone can ever hold a long walk and nothing is tested."""
    for n, tested in ((63, False), (64, True)):
        cards = "\n".join(f"- {{id: c{k}, kind: token, number: {k}, power: bump}}" for k in range(1, n + 1))
        folder = tmp_path / str(n)
        folder.mkdir()
        path = write_game(folder, OWN_FRAME_RULES, players="{min: 2, max: 3, default: 2}", cards=cards)
        generated = _programs(path)[0]
        deal = next(s for s in generated.sources if "procedure `deal`" in s and "def _b" in s)
        inline = re.search(r"for _q\d+ in _t\d+ if .* if len\(_t\d+ := st.zones\[\(1 \+ v0\)\]\) < 64 or", deal)
        plain = re.search(r"for _q\d+ in st.zones\[\(1 \+ v0\)\] if", deal)
        assert (inline is not None, plain is not None) == (tested, not tested)


def test_bodies_with_their_own_frame_keep_variables_in_python_locals(tmp_path):
    """A function's or never-pausing procedure's variables are Python locals (`v<slot>`),
    a small function's comprehension written inline binds a fresh name,
    closures get a list of their values, lambdas bind their own parameter; a variable that
    surely holds a player (a loop over `players` that never assigns it, `let q = player(1)`)
    is not tested for none, one the body assigns still is (R008 like the closures)."""
    cards = "\n".join(f"- {{id: c{k}, kind: token, number: {k}, power: bump}}" for k in range(1, 9))
    path = write_game(tmp_path, OWN_FRAME_RULES, players="{min: 2, max: 3, default: 2}", cards=cards)
    generated, closures = _programs(path)
    source = "\n".join(generated.sources)
    deal = next(s for s in generated.sources if "procedure `deal`" in s and "def _b" in s)
    assert "for v0 in rt.players:" in deal and "(1 + v0)" in deal and "is not None else _raise" not in deal
    assert "st.pvars[0][v4] += 1" in deal and "(rt, [v0, v1, v2, v3, v4, v5])" in deal
    # best(p), a function with a comprehension, is written inline: its variable a fresh name;
    # called from a statement, its comprehension is free when short: in a game of fewer than
    # 64 cards a zone always is, so nothing is tested (see the next test for more cards).
    assert re.search(r"for _q\d+ in st.zones\[\(1 \+ v0\)\] if", deal)
    assert re.search(r"for v1 in _f\d+\(rt, st.zones\[\(1 \+ v0 if v0 is not None", source)   # best(p): p may be none
    blank = next(s for s in generated.sources if "procedure `blank`" in s and "def _b" in s)
    assert blank.count("is None: raise") == 2          # the variables it assigns are tested for none
    for players in (2, 3):
        outcomes = []
        for program in (generated, closures):
            match = api.Match(program, players, 0)
            match.apply(0)
            failing = api.Match(program, players, 0)
            with pytest.raises(RulesRuntimeError) as info:
                failing.apply(1)
            outcomes.append((match.result, json.dumps(state_to_json(match.state), sort_keys=True),
                             info.value.code, info.value.message, str(info.value.span)))
        assert outcomes[0] == outcomes[1]
        assert outcomes[0][2:4] == ("R008", "cannot set `.played` of none")


def test_generated_code_compiles_without_python_warnings(tmp_path):
    """A literal compared with none (`5 == none`) is written `5 is None`, about which Python
    would warn on the designer's terminal (found by the 2036 fuzz campaign)."""
    import warnings
    rules = "var x: int = 0\ngame {\n  if 5 == none or \"a\" != none { x = 1 }\n  end_game(scores: [x])\n}\n"
    path = write_game(tmp_path, rules)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        game = api.load_game(path)
        match = api.new_game(game, 1, 0)
    assert match.result["scores"] == {"1": 1}
    assert any("(5 is None)" in s for s in game.program.sources)      # written as source, not left to the closures


ZONE_FAMILY_RULES = """
zone lane: indexed(4), visible(all)
zone cell: indexed(3, 2), visible(all)
var upto: int = 3
var total: int = 0
game {
  for i in 0..upto {
    total += count(lane(i)) + count(cell(i % 3, 1)) + sum(slice([1, 2, 3, 4], 1, 3))
    if i in [1, 2] { total += 1 }
  }
  end_game(scores: [total])
}
"""


@pytest.mark.parametrize("last,error", [
    (3, None),
    (4, "`lane(4)` does not exist: indexes are 0 to 3"),
])
def test_zone_families_and_short_walks_cost_and_fail_alike_in_both_back_ends(tmp_path, last, error):
    """`lane(i)` is indexed inline by the generated code and `cell(c, r)` by one helper; a
    short slice, `in` and `sum` written once per statement are free. The closures must agree
    on the result, the steps charged and the error."""
    path = write_game(tmp_path, ZONE_FAMILY_RULES.replace("var upto: int = 3", f"var upto: int = {last}"))
    generated, closures = _programs(path)
    assert any(".__class__ is int and 0 <= " in src for src in generated.sources)      # no closure call
    outcomes = []
    for program in (generated, closures):
        if error is None:
            match = api.Match(program, 1, 0)
            assert match.result["scores"] == {"1": 4 * 5 + 2}
            outcomes.append(match.rt.steps)
        else:
            with pytest.raises(RulesRuntimeError, match=re.escape(error)) as info:
                api.Match(program, 1, 0)
            outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]
