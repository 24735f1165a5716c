"""Batch simulation: many games with bots, summarised as the games stream in
(pipeline: running game -> agents -> **statistics**).

`simulate(config)` plays games `0..n-1`; game `i` uses the seed `derive(seed, i)` and the
agents' seeds derive from it, so a game's outcome does not depend on which worker plays it:
`--jobs 1`, `--jobs 8` and a Dask cluster give the same numbers. Each game is reduced, in
the worker, to a small record (result, length, branching, time, rules coverage, card use,
design metrics); the `Aggregator` folds records in game order into streaming summaries, so
memory stays flat for any number of games. Metric definitions and their sources are in
docs/simulate.md.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from rulesvm import api
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.interpreter.agents import SeatView, make_agent
from rulesvm.interpreter.agents.search import rewards
from rulesvm.interpreter.rng import derive

from .extras import install_hint
from .stats import Distribution, wilson


@dataclass(frozen=True)
class SimConfig:
    game: str
    n: int = 100
    players: int | None = None
    agents: tuple = ("random",)     # agent spec per seat (cycled when shorter)
    seed: int = 0
    variants: tuple = ()
    card_sets: tuple = ()
    set_pairs: tuple = ()
    max_steps: int | None = None
    max_decisions: int = 100_000    # a game still running after this many decisions is unfinished
    game_timeout: float | None = 60.0   # seconds: a game still running then has failed (checked between decisions)
    standings: str = "round"        # when the design metrics read `evaluate`: "round", "turn" or "decision"
    chunk: int = 25
    first: int = 0                  # the index of the first game: games first..first+n-1 (tune adds games in stages)
    rotate: bool = True             # rotate different agents over the seats, game by game

    def seat_agents(self, players: int, index: int = 0) -> list[str]:
        """The agent of each seat in game `index`: the list cycled over the seats and, when
        the agents differ, shifted by one seat per game so that each plays every seat."""
        base = [self.agents[s % len(self.agents)] for s in range(players)]
        if not self.rotate or len(set(base)) < 2:
            return base
        shift = index % players
        return base[-shift:] + base[:-shift] if shift else base


_GAMES: dict = {}   # per process: loaded games, so workers compile each game once
_STOP = None        # in a worker process: the pool's stop flag (shared memory), set by _worker_init


class Stopped(Exception):
    """In a worker: the simulation was interrupted, the game being played is abandoned."""


def load_for(config: SimConfig) -> api.Game:
    key = (os.path.abspath(config.game), config.card_sets, config.variants, config.set_pairs)
    if key not in _GAMES:
        _GAMES[key] = api.load_game(config.game, list(config.card_sets), list(config.variants),
                                    set_pairs=list(config.set_pairs))
    return _GAMES[key]


# ---------------------------------------------------------------------- one game

def play_one(config: SimConfig, index: int) -> dict:
    """Play game `index` of a simulation and reduce it to a record (JSON-able dict)."""
    game = load_for(config)
    record = _record_head(config, index)
    players, seed, specs = record["players"], record["seed"], record["agents"]
    coverage: dict = {}
    zone_owner = game.program.zone_owner
    card_defs = game.program.card_defs        # a card instance's definition: its id without `#copy`
    acquired: dict = {}

    def on_move(card: int, src: int, to: int) -> None:
        # A card moved into a zone of a player's from anywhere else: that player acquired it.
        owner = zone_owner[to]
        if owner is not None and zone_owner[src] != owner:
            key = (card_defs[card].id, owner)
            acquired[key] = acquired.get(key, 0) + 1
    start = time.perf_counter()
    try:
        agents = api.make_agents(dict(enumerate(specs)), seed)
        match = api.new_game(game, players, seed, max_steps=config.max_steps, coverage=coverage, on_move=on_move,
                             knowledge=any(a.reads_knowledge for a in agents.values()))
        evaluate = game.program.evaluator() if players > 1 else None
        every_decision = config.standings == "decision"
        # Turns between two readings: a round is one turn per player.
        stride = players if config.standings == "round" else 1
        decisions = options = turns = 0
        last_player = None
        chosen: dict = {}            # card instance * players + seat -> times chosen
        trajectory = []
        # The loop runs once per decision of every game: what it reads is bound once here.
        st, stop, clock = match.state, _STOP, time.perf_counter
        views = [SeatView(match, s) for s in range(players)]
        max_decisions, timeout = config.max_decisions, config.game_timeout
        deadline = start + timeout if timeout is not None else None
        while st.result is None:
            if decisions >= max_decisions:
                record.update(error=f"unfinished: still running after {decisions} decisions (--max-decisions)",
                              unfinished=True, time=clock() - start)
                return record
            if stop is not None and stop.value:
                raise Stopped
            # The clock is read every 16 decisions: a game that times out does so by seconds.
            if deadline is not None and not decisions & 15 and clock() > deadline:
                record.update(error=f"timed out: still running after {timeout:g} s, {decisions} "
                              "decisions (--game-timeout)", time=clock() - start)
                return record
            d = st.pending
            seat = d.player
            if seat != last_player:
                if evaluate is not None and not every_decision and turns and turns % stride == 0:
                    trajectory.append([evaluate(match.rt, s) for s in range(players)])     # a turn (round) ended
                turns += 1
                last_player = seat
            i = agents[seat].choose(views[seat])
            decisions += 1
            options += len(d.options)
            if d.value_type == "card":
                c = d.options[i].value
                if c.__class__ is int:
                    key = c * players + seat
                    chosen[key] = chosen.get(key, 0) + 1
            match.apply(i)
            if evaluate is not None and every_decision:
                trajectory.append([evaluate(match.rt, s) for s in range(players)])
        if evaluate is not None and not every_decision and last_player is not None:
            trajectory.append([evaluate(match.rt, s) for s in range(players)])             # the last turn
        result = match.result
    except RulesRuntimeError as exc:
        record.update(error=exc.describe(), time=time.perf_counter() - start)
        return record
    record.update(
        time=time.perf_counter() - start, result=result, decisions=decisions, turns=turns,
        options=options, coverage=coverage,
        rewards=rewards(result, players), forced_free=decisions,
        chosen=_by_card(chosen, card_defs, players),
        acquired=[[c, s, k] for (c, s), k in sorted(acquired.items())],
        drama=design_metrics(trajectory, result, players) if trajectory else None)
    return record


def _by_card(counts: dict, card_defs, players: int) -> list:
    """`[[card id, seat, times]]` from counts keyed by card instance * players + seat (copies
    of a card add up)."""
    out: dict = {}
    for key, k in counts.items():
        c, seat = divmod(key, players)
        pair = (card_defs[c].id, seat)
        out[pair] = out.get(pair, 0) + k
    return [[c, s, k] for (c, s), k in sorted(out.items())]


def _record_head(config: SimConfig, index: int) -> dict:
    """What every record of game `index` says: which game, its seed, its seats."""
    players = config.players or load_for(config).model.players[2]
    return {"index": index, "seed": derive(config.seed, index) & 0x7FFFFFFF, "players": players,
            "agents": config.seat_agents(players, index)}


def run_chunk(config: SimConfig, start: int, stop: int) -> list[dict]:
    return [play_one(config, i) for i in range(start, stop)]


def lost_chunk(config: SimConfig, start: int, stop: int) -> list[dict]:
    """The records of games whose worker process died (killed, out of memory) twice."""
    return [dict(_record_head(config, i), error="lost: the worker process playing it stopped (killed, or out "
                 "of memory), twice", time=0.0) for i in range(start, stop)]


def design_metrics(traj: list, result: dict, players: int) -> dict | None:
    """Lead changes, drama, decisiveness, stability of one game (see docs/simulate.md)."""
    winner = result.get("winner")
    if not traj:
        return None
    leaders, tops, lo, hi = [], [], None, None
    for values in traj:
        best, low = max(values), min(values)
        tops.append(best)
        leaders.append(values.index(best) if values.count(best) == 1 else None)
        lo = low if lo is None or low < lo else lo
        hi = best if hi is None or best > hi else hi
    changes = sum(1 for a, b in zip(leaders, leaders[1:]) if a is not None and b is not None and a != b)
    span = (hi - lo) or 1
    out = {"lead_changes": changes / max(len(traj) - 1, 1)}
    moved = 0
    for v1, v2 in zip(traj, traj[1:]):
        for a, b in zip(v1, v2):
            moved += abs(b - a)
    out["stability"] = 1 - (moved / players / span / (len(traj) - 1) if len(traj) > 1 else 0.0)
    if winner is not None:
        w = winner - 1
        behind = [(top - v[w]) / span for v, top in zip(traj, tops) if top > v[w]]
        out["drama"] = sum(behind) / len(behind) if behind else 0.0
        decided = len(traj)
        for k in range(len(traj) - 1, -1, -1):
            if leaders[k] != w:
                break
            decided = k
        out["decisiveness"] = 1 - decided / len(traj)
    return out


# ---------------------------------------------------------------------- aggregation

@dataclass
class Aggregator:
    players: int
    agents: list
    games: int = 0
    errors: list = field(default_factory=list)
    wins: list = field(default_factory=list)           # per seat
    agent_wins: dict = field(default_factory=dict)     # agent spec -> [wins, seats played]
    draws: int = 0
    outcomes: dict = field(default_factory=dict)
    reward: list = field(default_factory=list)
    decisions: Distribution = field(default_factory=Distribution)
    turns: Distribution = field(default_factory=Distribution)
    branching: Distribution = field(default_factory=lambda: Distribution(precision=2))
    time: Distribution = field(default_factory=lambda: Distribution(precision=3))
    scores: list = field(default_factory=list)         # per seat: Distribution
    margin: Distribution = field(default_factory=lambda: Distribution(precision=2))    # winner's score - next best
    coverage: dict = field(default_factory=dict)       # rule -> times run
    cards: dict = field(default_factory=dict)          # card -> {chosen, acquired, games, wins}
    metrics: dict = field(default_factory=dict)        # metric -> Distribution
    seat_agents: list = field(default_factory=list)    # per seat: the agents that played it

    def __post_init__(self):
        self.seat_agents = [set() for _ in range(self.players)]
        self.wins = [0] * self.players
        self.reward = [0.0] * self.players
        self.scores = [Distribution(precision=2) for _ in range(self.players)]

    def add(self, rec: dict) -> None:
        if "error" in rec:
            self.errors.append({"index": rec["index"], "seed": rec["seed"], "error": rec["error"]})
            return
        self.games += 1
        result = rec["result"]
        winner = result.get("winner")
        if winner is None and self.players > 1:
            self.draws += 1
        elif winner is not None:
            self.wins[winner - 1] += 1
        outcome = result.get("outcome") or ("win" if winner else "draw" if self.players > 1 else "none")
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        for s, spec in enumerate(rec["agents"]):
            entry = self.agent_wins.setdefault(spec, [0, 0, 0.0])
            entry[1] += 1
            entry[2] += rec["rewards"][s]
            if winner == s + 1:
                entry[0] += 1
            self.seat_agents[s].add(spec)
        for s, r in enumerate(rec["rewards"]):
            self.reward[s] += r
        numeric = {int(s): v for s, v in (result.get("scores") or {}).items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and int(s) - 1 < self.players}
        for s, value in numeric.items():
            self.scores[s - 1].add(value)
        others = [v for s, v in numeric.items() if s != winner]
        if winner in numeric and others:
            self.margin.add(numeric[winner] - max(others))
        self.decisions.add(rec["decisions"])
        self.turns.add(rec["turns"])
        if rec["decisions"]:
            self.branching.add(rec["options"] / rec["decisions"])
        self.time.add(rec["time"])
        for rule, k in rec["coverage"].items():
            self.coverage[rule] = self.coverage.get(rule, 0) + k
        for key in ("chosen", "acquired"):
            seen = set()
            for cid, seat, k in rec[key]:
                c = self.cards.setdefault(cid, {"chosen": 0, "acquired": 0, "games": 0, "wins": 0})
                c[key] += k
                if (cid, seat) not in seen:
                    seen.add((cid, seat))
                    c["games"] += 1
                    c["wins"] += 1 if winner == seat + 1 else 0
        for name, value in (rec.get("drama") or {}).items():
            self.metrics.setdefault(name, Distribution(precision=3)).add(value)

    def summary(self, rules: list[str], cards: list[str], meaningful: float | None = None) -> dict:
        n = self.games
        seats = []
        for s in range(self.players):
            lo, hi = wilson(self.wins[s], n)
            seats.append({"seat": s + 1, "agent": "/".join(sorted(self.seat_agents[s])) or self.agents[s % len(self.agents)],
                          "wins": self.wins[s],
                          "win_rate": round(self.wins[s] / n, 4) if n else None,
                          "ci95": [round(lo, 4), round(hi, 4)],
                          "mean_reward": round(self.reward[s] / n, 4) if n else None,
                          "score": self.scores[s].summary()})
        agents = {}
        for spec, (w, played, reward) in sorted(self.agent_wins.items()):
            lo, hi = wilson(w, played)
            agents[spec] = {"wins": w, "seats_played": played, "win_rate": round(w / played, 4) if played else None,
                            "ci95": [round(lo, 4), round(hi, 4)],
                            "mean_reward": round(reward / played, 4) if played else None}
        first = None
        if self.players > 1 and n:
            expected = 1 / self.players
            first = {"seat1_win_rate": round(self.wins[0] / n, 4), "fair_share": round(expected, 4),
                     "advantage": round(self.wins[0] / n - expected, 4)}
        never = sorted(r for r in rules if r not in self.coverage)
        card_rows = {}
        for cid in cards:
            c = self.cards.get(cid, {"chosen": 0, "acquired": 0, "games": 0, "wins": 0})
            card_rows[cid] = dict(c, win_rate=round(c["wins"] / c["games"], 4) if c["games"] else None)
        return {
            "games": n, "errors": self.errors, "players": self.players,
            "seats": seats, "agents": agents, "draws": self.draws,
            "draw_rate": round(self.draws / n, 4) if n and self.players > 1 else None,
            "first_player": first, "outcomes": self.outcomes,
            "outcome_rates": {k: round(v / n, 4) for k, v in sorted(self.outcomes.items())} if n else {},
            "length": {"decisions": self.decisions.summary(), "turns": self.turns.summary(),
                       "decisions_histogram": self.decisions.histogram()},
            "score_histograms": [self.scores[s].histogram() for s in range(self.players)],
            "margin": self.margin.summary(), "margin_histogram": self.margin.histogram(),
            "branching": self.branching.summary(), "time_per_game": self.time.summary(),
            "coverage": {"runs": dict(sorted(self.coverage.items())), "never_run": never},
            "cards": card_rows,
            "design": {name: d.summary() for name, d in sorted(self.metrics.items())},
        }


def rule_names(game: api.Game) -> list[str]:
    m = game.model
    names = [p.name for p in m.procs.values()]
    names += [t.proc.name for t in m.triggers]
    return sorted(names)


# ---------------------------------------------------------------------- running

class Interrupted(Exception):
    pass


def simulate(config: SimConfig, jobs: int = 1, backend: str = "local", scheduler: str | None = None,
             progress=None, cluster_options: dict | None = None) -> dict:
    """Play `config.n` games and summarise them; `progress(done, total)` is called as they finish.

    A KeyboardInterrupt stops the simulation: the worker processes are ended at once and the
    games finished so far are summarised (the summary then says `"interrupted": true`). The
    command line turns SIGTERM into the same interrupt (cli/simulation.py).
    """
    game = load_for(config)
    players = config.players or game.model.players[2]
    lo, hi, _ = game.model.players
    if not lo <= players <= hi:
        raise ValueError(f"{game.name} is for {lo}" + (f" to {hi}" if hi != lo else "") + f" players, not {players}")
    for spec in config.seat_agents(players):
        make_agent(spec, 0)          # raises AgentSpecError early for a bad spec
    agg = Aggregator(players, config.seat_agents(players))
    end = config.first + config.n
    chunks = ((i, min(i + config.chunk, end)) for i in range(config.first, end, config.chunk))
    interrupted = False
    started = time.perf_counter()
    try:
        # closing(): however the loop ends, the workers are stopped before the summary.
        with contextlib.closing(_run_chunks(config, chunks, jobs, backend, scheduler, cluster_options)) as results:
            for records in results:
                for rec in records:
                    agg.add(rec)
                if progress is not None:
                    progress(agg.games + len(agg.errors), config.n)
    except KeyboardInterrupt:
        interrupted = True
    summary = agg.summary(rule_names(game), [c.id for c in game.model.cards])
    summary.update(game=game.model.id, variants=list(game.model.applied_variants), seed=config.seed,
                   requested=config.n, interrupted=interrupted, jobs=jobs, backend=backend,
                   wall_time=round(time.perf_counter() - started, 3),
                   options={k: (list(v) if isinstance(v, tuple) else v) for k, v in game.program.options.items()})
    return summary


def _run_chunks(config, chunks, jobs: int, backend: str, scheduler, cluster_options):
    """Yield the records of each chunk, in chunk order, whatever order workers finish in."""
    if backend == "dask":
        yield from _dask_chunks(config, chunks, scheduler, cluster_options or {})
        return
    if jobs <= 1:
        for start, stop in chunks:
            yield run_chunk(config, start, stop)
        return
    ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    yield from _pool_chunks(config, iter(chunks), jobs, ctx)


def in_flight(submit, chunks, window: int):
    """(chunk, future) of each chunk in order, with at most `window` chunks submitted and not
    yet handed out: a million games are never a million futures (or their results) at once.
    The next chunk is submitted before the caller waits on the one handed out, so workers
    never idle while the parent folds records."""
    pending: collections.deque = collections.deque()
    for chunk in chunks:
        pending.append((chunk, submit(chunk)))
        if len(pending) >= window:
            yield pending.popleft()
    while pending:
        yield pending.popleft()


def _pool_chunks(config, chunks, jobs: int, ctx):
    """The records of `chunks` played by a pool of `jobs` processes. A worker that dies
    (killed, out of memory) breaks the pool, and every chunk in flight then with it: each of
    those is played again on its own, in a pool of its own, so one deadly chunk cannot take
    the others down twice (lost again, its games are reported as failed); the chunks not yet
    submitted go on in a fresh pool."""
    suspects: list = []

    def feed():
        while not suspects:             # once the pool is broken, the rest wait for a fresh one
            chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    with _pool(jobs, ctx) as pool:
        def submit(chunk):
            try:
                return pool.submit(run_chunk, config, *chunk)
            except BrokenProcessPool as exc:
                failed: Future = Future()
                failed.set_exception(exc)
                return failed
        for chunk, fut in in_flight(submit, feed(), jobs * WINDOW):
            try:
                yield fut.result()
            except BrokenProcessPool:
                suspects.append(chunk)
    for chunk in suspects:
        with _pool(1, ctx) as alone:
            try:
                yield alone.submit(run_chunk, config, *chunk).result()
            except BrokenProcessPool:
                yield lost_chunk(config, *chunk)
    if suspects:
        yield from _pool_chunks(config, chunks, jobs, ctx)


@contextlib.contextmanager
def _pool(workers: int, ctx):
    """A pool of worker processes that never outlives an interrupt: on Ctrl-C, SIGTERM (made
    an interrupt by the command line) or any other way out of the simulation, its workers are
    stopped and reaped before the exception goes on, so no process is left running."""
    stop = (ctx or multiprocessing).RawValue("b", 0)      # shared memory the workers read (see play_one)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init, initargs=(stop,))
    try:
        yield pool
    except BaseException:
        _stop_workers(pool, stop)
        raise
    pool.shutdown(wait=True)


WINDOW = 4         # chunks in flight per worker (see in_flight)
STOP_GRACE = 10.0       # seconds a stopped worker has to reach its next decision before it is killed


def _stop_workers(pool: ProcessPoolExecutor, stop) -> None:
    """Stop a pool now: its queued chunks are cancelled, and each worker stops at its next
    decision (raising Stopped) and exits. Workers are asked, not killed: a worker killed while
    it sends a result would leave the pool's reader waiting forever for the rest. Only a
    worker that reaches no decision within STOP_GRACE seconds (deep in a long rule) is killed."""
    stop.value = 1
    # The pool's processes (Python 3.14 has pool.terminate_workers(); before it, only this).
    processes = list((getattr(pool, "_processes", None) or {}).values())
    watchdog = threading.Timer(STOP_GRACE, lambda: [p.kill() for p in processes if p.is_alive()])
    watchdog.daemon = True
    watchdog.start()
    try:
        pool.shutdown(wait=True, cancel_futures=True)
    finally:
        watchdog.cancel()


def _worker_init(stop) -> None:
    """In each worker: the parent alone decides when the simulation stops, and tells the
    workers through `stop`. Ctrl-C reaches the whole process group and a service manager may
    send SIGTERM to every process: a worker ignores both (a forked worker would otherwise
    inherit the parent's handler, which turns SIGTERM into an interrupt)."""
    global _STOP
    _STOP = stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _dask_chunks(config, chunks, scheduler, cluster_options):
    try:
        # Dask is optional (the `dask` extra, see extras.py): imported only when asked for.
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ValueError(f"the Dask backend needs Dask, which is not installed: {install_hint('dask')}") from None
    cluster = None
    try:
        if scheduler:
            # How long to try: Dask's own setting (`distributed.comm.timeouts.connect`, 30 s
            # unless the user's Dask configuration says otherwise), or the caller's.
            wait = {"timeout": cluster_options["timeout"]} if "timeout" in cluster_options else {}
            client = Client(scheduler, **wait)
        else:
            cluster = LocalCluster(n_workers=cluster_options.get("workers", 2), threads_per_worker=1,
                                   processes=cluster_options.get("processes", True), dashboard_address=None)
            client = Client(cluster)
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
    try:
        submit = lambda chunk: client.submit(run_chunk, config, *chunk, pure=False)     # noqa: E731
        workers = len(client.scheduler_info().get("workers") or ()) or cluster_options.get("workers", 2)
        for _, fut in in_flight(submit, iter(chunks), workers * WINDOW):
            yield fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
