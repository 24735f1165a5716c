"""One game at the web table: the match, its seats, the bots, undo, and what each seat is sent.

The engine is authoritative: a page only ever sends "option N of decision S" (or "undo at
S"), where S is the table's version (it grows with every move and every undo), so an answer
to a decision that has since changed is refused as stale. Everything a seat is sent comes
from `Match.observation(seat)` plus the public log (see views.py).

All changes happen on the event loop, under one lock. Bots think in a worker thread (the
lock held, so the game cannot change under them) and their moves are applied on the loop;
every change wakes each connected page's writer, which sends that seat's current state.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field

from rulesvm import api, saves
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.interpreter.agents import SeatView

from .layout import table_layout
from .views import Images, PublicLog, card_var_defaults, decision_view, observation

PROTOCOL = 1
# The most messages waiting for one page (errors it provoked; states are never queued, only
# marked due): a page that sends but never reads is disconnected, the other seats play on.
MAX_OUTBOX = 64


class Rejected(Exception):
    """A message from a page that the table refuses; the text says why (sent back to it)."""


@dataclass
class Listener:
    """One open page of a seat: woken on every change, it sends that seat's state."""
    seat: int
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    dirty: bool = True                  # the state changed since it was last sent
    outbox: list = field(default_factory=list)      # other messages (errors), sent first
    log_sent: int = 0
    log_epoch: int = -1
    overflow: bool = False              # more than MAX_OUTBOX messages unread: the page is dropped

    def send(self, message: dict) -> None:
        if len(self.outbox) >= MAX_OUTBOX:
            self.overflow = True
        else:
            self.outbox.append(message)
        self.wake.set()


class Table:
    def __init__(self, game: api.Game, players: int, seed: int, bots: dict | None = None, record=None,
                 bot_delay: float = 0.0, undo: bool = True, hands: dict | None = None, undo_any: bool = False,
                 paused: bool = False, image_base: str = "/card-image"):
        """`bots` maps 0-based seats to agent specs (other seats are people); `record` gets
        every engine event (the --log writer); `undo_any`: undo may step back over what a
        seat has seen since (the host's `--undo any`); `paused`: the bots wait for the host
        (web/panel.py); `image_base`: where this table's pictures are served."""
        self.game = game
        self.players = players
        self.seed = seed
        self.specs = dict(bots or {})
        self.bots = api.make_agents(self.specs, seed)
        self.record = record
        self.bot_delay = bot_delay
        self.undo_allowed = undo
        self.tokens = {secrets.token_urlsafe(18): s for s in range(players)}
        self.seat_token = {s: t for t, s in self.tokens.items()}
        self.public = PublicLog()
        self.log_epoch = 0
        self.history = api.UndoHistory(self.bots, any_undo=undo_any)
        self.history_marks: list[int] = []      # per history entry: the public log's length before it
        self.version = 0
        self.error: str | None = None
        self.listeners: list[Listener] = []
        self.connected = [0] * players
        self.images = Images(game, image_base)
        self.paused = paused
        self._steps = 0                 # bot moves the host allowed while paused ("Step")
        self.records: list[dict] = []   # every engine event: the host downloads them as a log
        self.moves = saves.MoveRecorder()     # every answer since the start: the host's save
        self.layout = table_layout(game.model, game.options)
        for name, url in self.images.by_back.items():
            self.layout["backs"].setdefault(name, {})["image"] = url
        self.lock = asyncio.Lock()
        self._driver: asyncio.Task | None = None
        self.on_end = None              # called once with the match when the game ends (or the rules fail)
        self._ended = False
        self.match = api.new_game(game, players, seed, sink=self._sink, hands=hands)
        self.layout["card_vars"] = card_var_defaults(self.match)

    # ------------------------------------------------------------------ engine events
    def _sink(self, record: dict) -> None:
        if self.record is not None:
            self.record(record)
        self.records.append(record)
        self.moves(record)
        self.public.sink(record)

    # ------------------------------------------------------------------ what a seat sees
    def seat_kind(self, seat: int) -> str:
        return "bot" if seat in self.bots else "human"

    def hello(self, seat: int) -> dict:
        """Sent once when a page connects: what does not change during the game."""
        m = self.game.model
        return {"type": "hello", "protocol": PROTOCOL, "seat": seat + 1, "players": self.players,
                "game": {"id": m.id, "name": self.game.name, "variants": list(m.applied_variants)},
                "layout": self.layout, "undo": self.undo_allowed,
                "seats": self.seats()}

    def seats(self) -> list[dict]:
        return [{"seat": s + 1, "kind": self.seat_kind(s), "agent": self.specs.get(s),
                 "connected": self.connected[s] > 0} for s in range(self.players)]

    def can_undo(self, seat: int) -> bool:
        return self._undo_target(seat) is not None and self.history.refusal(self.match, seat) is None

    def _undo_target(self, seat: int) -> int | None:
        """The history entry an undo by `seat` goes back to, or None if it may not undo now:
        undo must be on, the seat a person's, the game running, and no other person may have
        decided since (their moves are theirs to take back)."""
        if not self.undo_allowed or seat in self.bots or self.match.is_over or self.error:
            return None
        for i in range(len(self.history.entries) - 1, -1, -1):
            who = self.history.entries[i][1]
            if who == seat:
                return i
            if who not in self.bots:
                return None
        return None

    def state(self, seat: int, listener: Listener | None = None) -> dict:
        """The seat's full current state; with a listener, only the log lines it lacks."""
        m = self.match
        log = self.public.for_seat(seat)
        base = 0
        if listener is not None:
            if listener.log_epoch == self.log_epoch and listener.log_sent <= len(log):
                base = listener.log_sent
            listener.log_epoch = self.log_epoch
            listener.log_sent = len(log)
        msg = {"type": "state", "serial": self.version, "seat": seat + 1,
               "observation": observation(m, seat, self.images),
               "decision": decision_view(m, seat), "log_base": base, "log": log[base:],
               "can_undo": self.can_undo(seat), "seats": self.seats(), "over": m.is_over,
               "result": m.result, "error": self.error, "bots_paused": self.paused}
        d = m.decision
        if d is not None:
            msg["decision"]["bot"] = d.player in self.bots
            if d.player in self.bots:
                msg["decision"].pop("options", None)      # a bot's seat page only watches
        return msg

    # ------------------------------------------------------------------ changes
    def _changed(self) -> None:
        for listener in self.listeners:
            listener.dirty = True
            listener.wake.set()

    def _apply(self, seat: int, index: int) -> None:
        m = self.match
        entry = self.public.before_decision(m, index)
        self.history.record(m, seat)
        self.history_marks.append(len(self.public.entries) - 1)
        try:
            m.apply(index)
        except RulesRuntimeError as exc:
            self.error = exc.describe()
            self.public.note("The game stopped: the rules failed: " + self.error.splitlines()[0])
        self.public.after_decision(m, entry)
        self.version += 1
        self._check_end()

    def _stop(self, error: str) -> None:
        self.error = error
        self.public.note("The game stopped: " + error.splitlines()[0])
        self._check_end()
        self._changed()

    def _check_end(self) -> None:
        if (self.match.is_over or self.error) and not self._ended:
            self._ended = True
            if self.on_end is not None:
                self.on_end(self.match)

    def check(self, seat: int, message) -> tuple[str, int | None]:
        """Validate a page's message; returns (action, option) or raises Rejected."""
        if not isinstance(message, dict):
            raise Rejected("a message is a JSON object such as {\"type\": \"choose\", \"option\": 0, \"serial\": 3}")
        kind = message.get("type")
        allowed = {"choose": {"type", "option", "serial"}, "undo": {"type", "serial"}}
        if kind not in allowed:
            raise Rejected(f"unknown message type {kind!r}: a page may only send `choose` or `undo`")
        extra = sorted(set(message) - allowed[kind])
        if extra:
            raise Rejected(f"unexpected field(s) in `{kind}`: {', '.join(map(str, extra))} "
                           "(the table only takes an option number and a serial)")
        serial = message.get("serial")
        if not isinstance(serial, int) or isinstance(serial, bool):
            raise Rejected("`serial` must be the number of the state the page is answering")
        option = message.get("option")
        if kind == "choose" and (not isinstance(option, int) or isinstance(option, bool)):
            raise Rejected("`option` must be an option number")
        return kind, option

    async def handle(self, seat: int, message) -> None:
        """Carry out a page's message (raises Rejected with the reason)."""
        kind, option = self.check(seat, message)
        async with self.lock:
            m = self.match
            if self.error:
                raise Rejected("the game has stopped (see the log): " + self.error.splitlines()[0])
            if m.is_over:
                raise Rejected("the game is over")
            if message["serial"] != self.version:
                raise Rejected(f"stale: that was sent for state {message['serial']}, but the game has moved on "
                               f"to state {self.version}; your page now shows the current one")
            if seat in self.bots:
                raise Rejected(f"seat {seat + 1} is played by a bot ({self.specs[seat]})")
            if kind == "undo":
                self._undo(seat)
            else:
                d = m.decision
                if d is None or d.player != seat:
                    raise Rejected(f"it is not your turn: Player {d.player + 1} is deciding" if d is not None
                                   else "no decision is pending")
                if not 0 <= option < len(d.options):
                    raise Rejected(f"option {option} does not exist: there are {len(d.options)} options "
                                   f"(0 to {len(d.options) - 1})")
                self._apply(seat, option)
        self._changed()
        self.kick()

    def _undo(self, seat: int) -> None:
        i = self._undo_target(seat)
        if i is None:
            if not self.undo_allowed:
                raise Rejected("undo is off at this table (started with --no-undo)")
            if not any(who == seat for _, who, _ in self.history.entries):
                raise Rejected("nothing to undo: you have not decided anything yet")
            raise Rejected("you cannot undo now: another player has decided since your last decision")
        log_length = self.history_marks[i]
        try:
            undone = self.history.undo(self.match, seat)
        except api.UndoRefused as exc:
            raise Rejected(f"you cannot undo now: {exc}") from None
        del self.history_marks[i:]
        self.public.truncate(log_length)
        self.public.note(f"Player {seat + 1} took back {undone} decision{'s' if undone != 1 else ''}")
        self.log_epoch += 1
        self.version += 1

    # ------------------------------------------------------------------ bots
    def kick(self) -> None:
        """Let the bots play if it is their turn (one driver task at a time)."""
        if self._driver is None or self._driver.done():
            self._driver = asyncio.get_running_loop().create_task(self._drive())

    async def _drive(self) -> None:
        while True:
            async with self.lock:
                m = self.match
                if m.is_over or self.error or m.current_player not in self.bots:
                    return
                if self.paused and self._steps <= 0:
                    return                      # the host holds the bots (web/panel.py)
                seat = m.current_player
                version = self.version
                try:
                    choice = await asyncio.to_thread(self.bots[seat].choose, SeatView(m, seat))
                    if not isinstance(choice, int) or not 0 <= choice < len(m.decision.options):
                        raise ValueError(f"it answered {choice!r}, not an option number")
                except RulesRuntimeError as exc:
                    self._stop(exc.describe())
                    return
                except Exception as exc:        # a broken bot stops the game with a message, not silently
                    self._stop(f"the bot of seat {seat + 1} ({self.specs[seat]}) failed: {exc}")
                    return
                if self.version != version or m.current_player != seat:
                    continue
                self._apply(seat, choice)
                if self.paused:
                    # (a bot that was thinking when the host paused still moves: no step is owed)
                    self._steps = max(0, self._steps - 1)
            self._changed()
            if self.bot_delay > 0 and not self.match.is_over:
                await asyncio.sleep(self.bot_delay)
            else:
                await asyncio.sleep(0)

    def control(self, action: str, delay: float | None = None) -> None:
        """The host's hold on the bots: `pause`, `run`, `step` (one bot move while paused),
        `delay` (seconds between two bot moves)."""
        if action == "pause":
            self.paused = True
            self._steps = 0
        elif action == "run":
            self.paused = False
            self._steps = 0
        elif action == "step":
            self.paused = True
            self._steps += 1
        elif action == "delay":
            self.bot_delay = delay
        self._changed()
        self.kick()

    async def idle(self) -> None:
        """Wait until the bots have nothing left to do (tests use it)."""
        while self._driver is not None and not self._driver.done():
            await asyncio.sleep(0.01)

    # ------------------------------------------------------------------ pages
    def connect(self, seat: int) -> Listener:
        listener = Listener(seat)
        listener.wake.set()
        self.listeners.append(listener)
        self.connected[seat] += 1
        self._changed()
        return listener

    def disconnect(self, listener: Listener) -> None:
        if listener in self.listeners:
            self.listeners.remove(listener)
            self.connected[listener.seat] -= 1
            self._changed()
