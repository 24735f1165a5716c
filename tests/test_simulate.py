"""Batch simulation: reproducible whatever the workers, streaming statistics, outputs,
variant comparison, the Dask backend, and bad input."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from rulesvm.analysis import extras
from rulesvm.analysis.extras import install_hint
from rulesvm.analysis.plots import binned
from rulesvm.analysis.simulate import SimConfig, simulate
from rulesvm.analysis.stats import binomial_tail, two_proportion_p, welch_p, wilson

from .conftest import ROOT, ctrl_c_as_at_a_terminal
from .test_cli import rulesvm

GK = os.path.join(ROOT, "games", "giant_king.yaml")
MS = os.path.join(ROOT, "games", "mach_struggle.yaml")


def _strip(summary: dict) -> dict:
    """A summary without what depends on the machine (times) or the run (jobs, backend)."""
    s = json.loads(json.dumps(summary))
    for key in ("wall_time", "jobs", "backend", "time_per_game"):
        s.pop(key, None)
    return s


def test_same_numbers_whatever_the_number_of_jobs():
    config = SimConfig(GK, n=60, seed=3, chunk=7)
    one = simulate(config, jobs=1)
    two = simulate(config, jobs=2)
    assert _strip(one) == _strip(two)
    assert one["games"] == 60 and not one["errors"]


@pytest.mark.slow
def test_summary_contents():
    s = simulate(SimConfig(GK, n=80, seed=1, agents=("greedy", "random", "random", "random")))
    assert sum(seat["wins"] for seat in s["seats"]) + s["draws"] == 80
    assert s["agents"]["greedy"]["seats_played"] == 80          # rotated: once per game, over all seats
    assert s["agents"]["greedy"]["win_rate"] > s["agents"]["random"]["win_rate"]
    lo, hi = s["seats"][0]["ci95"]
    assert lo <= s["seats"][0]["win_rate"] <= hi
    assert s["length"]["decisions"]["mean"] > 50 and s["branching"]["mean"] > 1
    assert s["coverage"]["runs"]["play_round"] > 80 and s["coverage"]["never_run"] == []
    assert s["cards"]["joker"]["chosen"] > 0 and 0 <= s["cards"]["joker"]["win_rate"] <= 1
    assert set(s["design"]) == {"lead_changes", "drama", "decisiveness", "stability"}
    assert s["first_player"]["fair_share"] == 0.25


def test_solo_game_reports_outcomes_and_scores():
    s = simulate(SimConfig(os.path.join(ROOT, "games", "ufo_abduction.yaml"), n=40, seed=2))
    assert s["players"] == 1 and sum(s["outcomes"].values()) == 40
    assert set(s["outcome_rates"]) <= {"completed", "game over"}
    assert s["seats"][0]["score"]["n"] == 40


def test_games_that_fail_are_counted_with_their_seed():
    s = simulate(SimConfig(os.path.join(ROOT, "tests", "games", "runaway.yaml"), n=20, seed=1, max_steps=2000))
    assert s["games"] + len(s["errors"]) == 20
    assert s["errors"] and all("seed" in e and "R002" in e["error"] for e in s["errors"])


def test_games_that_never_end_are_stopped_and_counted_as_unfinished():
    s = simulate(SimConfig(MS, n=6, seed=1, max_decisions=10))
    assert s["games"] + len(s["errors"]) == 6
    assert s["errors"] and all("unfinished" in e["error"] and "10 decisions" in e["error"] for e in s["errors"])
    assert simulate(SimConfig(MS, n=6, seed=1))["errors"] == []


def test_cli_max_decisions_reports_unfinished_games():
    p = rulesvm("simulate", "games/mach_struggle.yaml", "-n", "3", "--max-decisions", "5", "--quiet")
    assert "unfinished: still running after 5 decisions" in p.stderr


def test_interrupt_keeps_finished_games():
    calls = []

    def progress(done, total):
        calls.append(done)
        if done >= 10:
            raise KeyboardInterrupt
    s = simulate(SimConfig(GK, n=50, seed=1, chunk=5), progress=progress)
    assert s["interrupted"] and s["games"] == 10 and s["requested"] == 50


def test_memory_stays_flat():
    from rulesvm.analysis.simulate import Aggregator, play_one
    config = SimConfig(MS, n=1, seed=0)
    agg = Aggregator(2, ["random"])
    rec = play_one(config, 0)
    for _ in range(3000):
        agg.add(rec)
    size = len(json.dumps(agg.summary([], [])))
    for _ in range(3000):
        agg.add(rec)
    assert len(json.dumps(agg.summary([], []))) < size * 1.2


def test_dask_backend_gives_the_local_numbers():
    pytest.importorskip("dask.distributed")
    config = SimConfig(MS, n=30, seed=5, chunk=6)
    local = simulate(config, jobs=1)
    dask = simulate(config, backend="dask", cluster_options={"workers": 1, "processes": False})
    assert _strip(local) == _strip(dask)


def test_cli_simulate_outputs(tmp_path):
    out = tmp_path / "s"
    p = rulesvm("simulate", "games/mach_struggle.yaml", "-n", "30", "--seed", "2", "--jobs", "1", "--json",
                "--csv", f"{out}.csv", "--plot", f"{out}.png", "--report", f"{out}.html")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["games"] == 30 and data["game"] == "mach_struggle"
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    page = (tmp_path / "s.html").read_text()
    assert "data:image/png;base64," in page and "Win rates" in page and "<table class='sortable'>" in page
    assert "Rules coverage" in (tmp_path / "s.csv").read_text()
    human = rulesvm("simulate", "games/mach_struggle.yaml", "-n", "10", "--jobs", "1", "--quiet")
    assert human.returncode == 0 and "Win rates" in human.stdout and "Rules coverage" in human.stdout


def test_cli_compare():
    p = rulesvm("compare", "games/mach_struggle.yaml", "--variant", "long_race", "-n", "40", "--jobs", "1", "--json",
                "--quiet")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    rows = {m["metric"]: m for m in data["variants"][0]["metrics"]}
    assert rows["mean decisions"]["difference"] > 0 and rows["mean decisions"]["significant"]
    human = rulesvm("compare", "games/mach_struggle.yaml", "--variant", "long_race", "-n", "10", "--jobs", "1",
                    "--quiet")
    assert "p-value" in human.stdout


@pytest.mark.parametrize("args,code,fragment", [
    (["simulate", "games/mach_struggle.yaml", "-n", "0"], 2, "-n must be at least 1"),
    (["simulate", "games/mach_struggle.yaml", "--agents", "wizard"], 2, "unknown agent `wizard`"),
    (["simulate", "games/mach_struggle.yaml", "--agents", "mcts:iterationz=5"], 2, "has no parameter `iterationz`"),
    (["simulate", "games/mach_struggle.yaml", "--variant", "nope"], 2, "unknown variant"),
    (["simulate", "games/mach_struggle.yaml", "--variant", "tests/variants/breaks_game.yaml"], 1, "error[E"),
    (["simulate", "games/mach_struggle.yaml", "--backend", "spark"], 2, "--backend"),
    (["simulate", "games/mach_struggle.yaml", "--max-decisions", "0"], 2, "--max-decisions must be at least 1"),
    (["simulate", "games/mach_struggle.yaml", "-n", "2", "--backend", "dask", "--scheduler",
      "tcp://127.0.0.1:9"], 2, "cannot reach the Dask scheduler"),
])
def test_bad_simulation_input(args, code, fragment, monkeypatch):
    # How long rulesvm tries to reach a scheduler is Dask's setting (docs/scaling.md).
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "1s")
    p = rulesvm(*args, "--quiet")
    assert p.returncode == code, (p.stdout, p.stderr)
    assert fragment in p.stderr


def test_statistics_helpers():
    lo, hi = wilson(50, 100)
    assert 0.40 < lo < 0.41 and 0.59 < hi < 0.60
    assert two_proportion_p(60, 100, 40, 100) < 0.01
    assert two_proportion_p(50, 100, 50, 100) == 1.0
    assert welch_p(10, 4, 50, 10, 4, 50) > 0.99
    assert welch_p(11, 4, 50, 10, 4, 50) < 0.05
    assert abs(binomial_tail(8, 10, 0.5) - 0.0546875) < 1e-9


def test_simulate_exits_1_when_a_game_failed_and_still_summarises_the_others(tmp_path):
    """Half the games hit a rules error: the others are summarised, the failures listed
    with their seeds, and the exit code says something went wrong."""
    import subprocess
    import sys
    (tmp_path / "g.rules").write_text("game {\n  if roll(2) == 1 { let x = [1][5] }\n  end_game(scores: [1])\n}\n")
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 1\nrules: g.rules\n")
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "simulate", str(tmp_path / "g.yaml"), "-n", "20",
                          "--jobs", "1", "--quiet"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "failed" in out.stderr and "seed" in out.stderr and "Traceback" not in out.stderr
    ok = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "simulate",
                         os.path.join(ROOT, "games", "mach_struggle.yaml"), "-n", "4", "--jobs", "1", "--quiet"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr


def _dies_on_the_first_chunk(config, start, stop):
    """A worker that dies (as if killed, or out of memory) when it plays games 0..."""
    if start == _DEADLY_START:
        os._exit(1)
    return _REAL_RUN_CHUNK(config, start, stop)


_REAL_RUN_CHUNK = None
_DEADLY_START = 0


def test_a_killed_worker_loses_only_its_own_games(monkeypatch):
    """The pool breaks; the unfinished chunks are played again in a new pool, and the chunk
    whose worker dies again is reported game by game with its seeds; the rest is summarised."""
    from rulesvm.analysis import simulate as sim
    global _REAL_RUN_CHUNK
    _REAL_RUN_CHUNK = sim.run_chunk
    monkeypatch.setattr(sim, "run_chunk", _dies_on_the_first_chunk)     # forked workers inherit it
    config = sim.SimConfig(game=os.path.join(ROOT, "games", "mach_struggle.yaml"), n=20, chunk=5)
    summary = sim.simulate(config, jobs=2)
    lost = [e for e in summary["errors"] if e["error"].startswith("lost")]
    assert sorted(e["index"] for e in lost) == [0, 1, 2, 3, 4]
    assert all(isinstance(e["seed"], int) for e in lost)
    assert summary["games"] == 15 and not summary["interrupted"]


def test_a_game_running_past_the_time_limit_fails_with_its_seed():
    from rulesvm.analysis import simulate as sim
    config = sim.SimConfig(game=os.path.join(ROOT, "games", "giant_king.yaml"), n=3, game_timeout=1e-9)
    summary = sim.simulate(config, jobs=1)
    assert [e["index"] for e in summary["errors"]] == [0, 1, 2]
    assert all("timed out" in e["error"] and "--game-timeout" in e["error"] for e in summary["errors"])


def test_game_timeout_must_be_positive_in_simulate_and_compare():
    import subprocess
    import sys
    ms = os.path.join(ROOT, "games", "mach_struggle.yaml")
    for args in (["simulate", ms, "-n", "2"], ["compare", ms, "--variant", "long_race", "-n", "2"]):
        out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args, "--game-timeout", "0", "--quiet"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "--game-timeout must be more than 0" in out.stderr, args


def _children(pid: int) -> dict:
    """The processes whose parent is `pid`: {(pid, start time): CPU seconds so far} (from /proc)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()       # from the state on: field 3 of proc(5)
        if int(fields[1]) == pid:
            found[(int(entry), fields[19])] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def _still_running(process: tuple) -> bool:
    """Whether this very process (same pid and start time, not a reuse of the pid) still exists."""
    try:
        with open(f"/proc/{process[0]}/stat") as fh:
            stat = fh.read()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[19] == process[1] and fields[0] != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads the process table from /proc (Linux)")
@pytest.mark.parametrize("command,how,code", [
    ("simulate", "SIGTERM", 143),       # kill PID, a service manager, a CI timeout: the parent alone
    ("simulate", "SIGINT", 130),        # Ctrl-C at a terminal: the whole process group
    ("compare", "SIGTERM", 143),
])
def test_a_signal_stops_the_workers_and_the_finished_games_are_summarised(command, how, code):
    """SIGTERM is Ctrl-C: the workers stop, the games finished so far are summarised, the exit
    code says the run was cut short, and no worker process outlives the command."""
    args = ["--variant", "three_laps"] if command == "compare" else []
    p = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", command, GK, *args, "-n", "100000", "--jobs", "2",
                          "--json", "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=ctrl_c_as_at_a_terminal)
    try:
        # Wait until both workers have played for a while (CPU time, not wall time: the
        # machine may be busy), so that games have finished; the deadline only guards a hang.
        deadline = time.monotonic() + 120
        workers = {}
        while time.monotonic() < deadline and p.poll() is None:
            workers = _children(p.pid)
            if len(workers) >= 2 and sum(workers.values()) >= 1.5:
                break
            time.sleep(0.1)
        assert len(workers) >= 2 and p.poll() is None, "the workers never got going"
        if how == "SIGTERM":
            os.kill(p.pid, signal.SIGTERM)
        else:
            os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == code, err
    assert "Traceback" not in err and "interrupted" in err
    data = json.loads(out)
    assert data["interrupted"]
    games = data["games"] if command == "simulate" else data["base"]["games"]
    assert 0 < games < 100000
    assert not [w for w in workers if _still_running(w)], "a worker outlived the command"


@pytest.mark.parametrize("standings", ["round", "turn", "decision"])
def test_design_metrics_read_the_standings_once_per_round_turn_or_decision(standings, monkeypatch):
    """The trajectory behind the design metrics: one evaluation per player at the end of every
    round of turns (one per player) and of the game by default, of every turn, or after every
    decision."""
    from rulesvm.analysis import simulate as sim
    cfg = SimConfig(game=GK, n=3, seed=5, standings=standings)
    game = sim.load_for(cfg)
    real = game.program.evaluate
    calls = []
    monkeypatch.setattr(type(game.program), "evaluator", lambda self: lambda rt, s: calls.append(s) or real(rt, s))
    for i in range(3):
        calls.clear()
        record = sim.play_one(cfg, i)
        turns, players = record["turns"], record["players"]
        expected = {"round": (turns - 1) // players + 1, "turn": turns, "decision": record["decisions"]}[standings]
        assert len(calls) == players * expected and expected > 10
        assert set(record["drama"]) == {"lead_changes", "stability", "drama", "decisiveness"}


def test_standings_must_be_round_turn_or_decision():
    out = rulesvm("simulate", GK, "-n", "2", "--standings", "move", "--quiet")
    assert out.returncode == 2 and "--standings must be `round`, `turn` or `decision`" in out.stdout + out.stderr


def test_a_worker_killed_late_in_a_long_run_loses_only_its_games_and_the_rest_go_on(monkeypatch):
    """Far more chunks than are ever in flight: the pool breaks at game 50; the chunks in
    flight then are played again alone, the chunks not yet submitted go on in a fresh pool."""
    from rulesvm.analysis import simulate as sim
    global _REAL_RUN_CHUNK, _DEADLY_START
    _REAL_RUN_CHUNK, _DEADLY_START = sim.run_chunk, 50
    monkeypatch.setattr(sim, "run_chunk", _dies_on_the_first_chunk)
    try:
        config = sim.SimConfig(game=os.path.join(ROOT, "games", "mach_struggle.yaml"), n=200, chunk=5)
        summary = sim.simulate(config, jobs=2)
    finally:
        _DEADLY_START = 0
    lost = [e for e in summary["errors"] if e["error"].startswith("lost")]
    assert sorted(e["index"] for e in lost) == [50, 51, 52, 53, 54]
    assert summary["games"] == 195
    assert _strip(summary)["seats"] != [] and not summary["interrupted"]


def test_chunks_in_flight_never_pass_the_window():
    """A million games are never a million futures: at most `window` chunks are submitted and
    not yet handed out, and they come out in order."""
    from concurrent.futures import Future
    from rulesvm.analysis.simulate import in_flight
    handed, outstanding, most = [], set(), [0]

    def submit(chunk):
        outstanding.add(chunk)
        most[0] = max(most[0], len(outstanding))
        f = Future()
        f.set_result(chunk)
        return f
    for chunk, fut in in_flight(submit, iter(range(1000)), 8):
        outstanding.discard(chunk)
        handed.append(fut.result())
    assert handed == list(range(1000))
    assert most[0] == 8



def _run_without(module: str, *args, cwd: str = ROOT) -> subprocess.CompletedProcess:
    """`rulesvm ARGS` in a Python where importing `module` fails, as where it is not installed."""
    code = (f"import sys; sys.modules[{module!r}] = None; sys.argv = ['rulesvm', *{list(args)!r}]; "
            "from rulesvm.cli.main import main; main()")
    p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def _report_sections(page: str) -> dict:
    """Each <h2> of a report page -> the HTML up to the next one."""
    parts = page.split("<h2>")[1:]
    return {part.split("</h2>", 1)[0]: part.split("</h2>", 1)[1] for part in parts}


def test_the_report_shows_what_the_simulation_found(tmp_path):
    """The report of a tournament: a plot per finding (agents with intervals, length, margin,
    cards), each explained; sortable tables; every design metric defined; nothing fetched."""
    out = tmp_path / "r.html"
    p = rulesvm("simulate", "games/mach_struggle.yaml", "-n", "20", "--agents", "greedy:rollouts=1,random",
                "--jobs", "1", "--quiet", "--report", str(out))
    assert p.returncode == 0, p.stderr
    page = out.read_text(encoding="utf-8")
    plots = re.findall(r"<figure id='plot-(\w+)'><img alt='[^']+' src='data:image/png;base64,", page)
    assert plots == ["agents", "length", "margin", "card_wins", "card_use"]
    assert "img{max-width:100%;height:auto" in page              # images fit the page
    sections = _report_sections(page)
    assert "<figcaption>Each agent's share of the games it played, with its 95% Wilson interval" in \
        html.unescape(sections["Win rate by agent"])
    assert all("<figcaption>" in sections[t] for t in ("Game length", "Winner&#x27;s margin"))
    # The finding is in the first lines too: the stronger agent first, with its interval.
    assert re.search(r"<b>Result:</b> greedy:rollouts=1 wins 0\.\d+ \(95% CI 0\.\d+-\d\.\d+\); random wins", page)
    heads = {name: re.findall(r"<th>(.*?)</th>", body) for name, body in sections.items()}
    assert heads["Agents"] == ["agent", "wins", "seats played", "win rate", "95% CI", "mean reward"]
    assert heads["Cards"] == ["card", "chosen", "acquired", "games (card, seat)", "win rate of its seat", "95% CI"]
    assert "winner&#x27;s margin" in sections["Game length and branching"]
    design = sections["Design metrics (docs/simulate.md)"]
    assert heads["Design metrics (docs/simulate.md)"][-1] == "what it measures"
    for metric, words in (("lead_changes", "a different single player leads"), ("drama", "come back from"),
                          ("decisiveness", "took the lead for good"), ("stability", "positions change slowly")):
        row = design.split(f"<td>{metric}</td>", 1)[1].split("</tr>", 1)[0]
        assert words in row, metric
    for name in ("Agents", "Win rates", "Cards", "Rules coverage"):
        assert "<p class='about'>" in sections[name] and "<table class='sortable'>" in sections[name]
    assert "<script>" in page and "table.sortable th" in page
    assert "http://" not in page and "https://" not in page       # offline: no CDN, no remote script


def test_the_report_without_matplotlib_says_so_and_keeps_the_tables(tmp_path):
    out = tmp_path / "r.html"
    p = _run_without("matplotlib", "simulate", "games/mach_struggle.yaml", "-n", "6", "--jobs", "1", "--quiet",
                     "--report", str(out))
    assert p.returncode == 0, p.stderr
    assert f"the report {out} has no plots: plots need matplotlib, which is not installed" in p.stderr
    assert "pip install -e '.[plot]'" in p.stderr                # a checkout installs its own extra
    page = out.read_text(encoding="utf-8")
    assert "<p class='warning' id='no-plots'>No plots: plots need matplotlib" in page
    assert "pip install -e &#x27;.[plot]&#x27;" in page
    assert "<figure id=" not in page and "<h2>Agents</h2>" in page and "<h2>Win rates</h2>" in page
    plot = _run_without("matplotlib", "simulate", "games/mach_struggle.yaml", "-n", "2", "--jobs", "1", "--quiet",
                        "--plot", str(tmp_path / "p.png"))
    assert plot.returncode == 2 and "pip install -e '.[plot]'" in plot.stderr
    assert not (tmp_path / "p.png").exists()


def test_the_dask_backend_without_dask_says_how_to_install_it():
    p = _run_without("dask", "simulate", "games/mach_struggle.yaml", "-n", "2", "--backend", "dask", "--quiet")
    assert p.returncode == 2
    assert "the Dask backend needs Dask, which is not installed: pip install -e '.[dask]'" in p.stderr


def test_install_hints_for_a_checkout_and_for_an_installed_package(monkeypatch, tmp_path):
    assert install_hint("plot").startswith("pip install -e '.[plot]' (in ")
    monkeypatch.setattr(extras, "_HERE", str(tmp_path))             # no pyproject.toml: an installed package
    assert install_hint("dask") == "pip install 'rulesvm[dask]'"


def test_winners_margin_and_binned_lengths():
    s = simulate(SimConfig(MS, n=30, seed=4))
    assert s["margin"]["n"] == 30 and s["margin"]["min"] >= 0
    assert sum(k for _, k in s["margin_histogram"]) == 30
    edges, counts, width = binned([(v, 1) for v in range(100, 400)])
    assert len(edges) <= 21 and sum(counts) == 300 and width == 15
    edges, counts, width = binned([(3, 5), (4, 2)])
    assert (edges, counts, width) == ([3, 4], [5, 2], 1)


def test_compare_names_its_columns_and_starts_with_its_title():
    p = rulesvm("compare", "games/mach_struggle.yaml", "--variant", "long_race", "-n", "6", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("base game vs long_race (6 games each, same seeds)\n")
    assert p.stderr == ""                                        # no progress bar's blank lines when piped
    header = p.stdout.splitlines()[2]
    assert "base game" in header and "long_race" in header and "difference" in header
