"""The web table behind the real server: `rulesvm serve` as a subprocess (uvicorn, with
web/connections.py), spoken to over real sockets, as a hostile client would; and, for what
takes longer than a test should wait, uvicorn in a thread with shorter timeouts.

A page here is a WebSocket client on a plain socket (`Page`): it reads only when the test
says so, which is how a page that never reads is played. Each test starts its own table
(Mach Struggle, seat 1 a bot, seat 2 played by the test). No assertion is on a duration:
every wait has a generous deadline that only guards against a hang.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
import uvicorn

from rulesvm import api
from rulesvm.cli.serve import MAX_CONNECTIONS
from rulesvm.web.connections import TableHTTP, TableWebSocket
from rulesvm.web.server import CLOSE_TOO_SLOW, MAX_MESSAGE, create_app
from rulesvm.web.table import Table as WebTable

from .conftest import ROOT, ctrl_c_as_at_a_terminal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's memory from /proc")

HANG = 60       # seconds: the longest any step may take before the test calls it a hang


class Closed(Exception):
    """The server closed the WebSocket; `code` is its close code (None: no close frame)."""

    def __init__(self, code):
        super().__init__(f"closed with code {code}")
        self.code = code


class Page:
    """A WebSocket client over a raw socket (RFC 6455: masked text frames out, frames in,
    pings answered when it reads)."""

    def __init__(self, port: int, token: str, rcvbuf: int | None = None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(HANG)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws/{token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                break
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ")[1]) if head else None

    def _fill(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        self.buffer += data
        return bool(data)

    def _need(self, n: int) -> None:
        while len(self.buffer) < n:
            if not self._fill():
                raise Closed(None)

    def frame(self, text: str | bytes, opcode: int = 0x1) -> bytes:
        payload = text.encode() if isinstance(text, str) else text
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n)
                                if n < 65536 else bytes([0x80 | 127]) + struct.pack("!Q", n))
        return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

    def send(self, text: str) -> None:
        self.sock.sendall(self.frame(text))

    def receive(self) -> dict:
        """The next message (JSON); raises Closed at a close frame or the end of the stream."""
        while True:
            self._need(2)
            opcode, n = self.buffer[0] & 0x0F, self.buffer[1] & 0x7F
            start = 2
            if n == 126:
                self._need(4)
                n, start = struct.unpack("!H", self.buffer[2:4])[0], 4
            elif n == 127:
                self._need(10)
                n, start = struct.unpack("!Q", self.buffer[2:10])[0], 10
            self._need(start + n)
            payload, self.buffer = self.buffer[start:start + n], self.buffer[start + n:]
            if opcode == 0x8:
                raise Closed(struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None)
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x9:
                # A ping: answered as a browser does, whenever the page reads. Unanswered, the
                # server's keepalive (uvicorn: 20 s, then 20 s more) closes with 1011, which
                # made a slow run of a long test fail at random.
                self.sock.sendall(self.frame(payload, 0xA))
            # pongs: not for the test

    def close(self) -> None:
        self.sock.close()


def send_junk(page: Page, batches: int, size: int = 20) -> None:
    """Messages the table refuses, `size` at a time with a pause between; each is answered
    with an error and the state again."""
    junk = page.frame("not json") * size
    for _ in range(batches):
        page.sock.sendall(junk)
        time.sleep(0.01)


class Table:
    """`rulesvm serve` in a subprocess: Mach Struggle's long race (some 25 decisions a seat),
    seat 1 a random bot, seat 2 for the test."""

    def __init__(self, tmp_path):
        self.out, self.err = tmp_path / "out.txt", tmp_path / "err.txt"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "rulesvm.cli.main", "serve", os.path.join(ROOT, "games", "mach_struggle.yaml"),
                 "--variant", "long_race", "--bots", "1", "--bot-delay", "0", "--seed", "3", "--port", "0",
                 "--no-browser"],
                cwd=ROOT, stdout=out, stderr=err, start_new_session=True,
                preexec_fn=ctrl_c_as_at_a_terminal)     # stop() sends Ctrl-C
        deadline = time.monotonic() + HANG
        urls = []
        while len(urls) < 2:
            assert time.monotonic() < deadline and self.proc.poll() is None, self.err.read_text()
            time.sleep(0.1)
            urls = re.findall(r"http://127\.0\.0\.1:(\d+)/seat/(\S+)", self.out.read_text())
        self.port = int(urls[0][0])
        self.bot_token, self.token = urls[0][1], urls[1][1]

    def get(self, path: str) -> int:
        """The status of a plain GET (a fresh connection)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=HANG) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            head = s.recv(64)
        return int(head.split(b" ")[1]) if head else 0

    def get_until_ok(self, path: str) -> int:
        """A plain GET, again until it is not refused as busy (closed connections take a moment to go)."""
        deadline = time.monotonic() + HANG
        while (status := self.get(path)) == 503 and time.monotonic() < deadline:
            time.sleep(0.2)
        return status

    def memory_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            return int(re.search(r"VmRSS:\s+(\d+)", fh.read()).group(1)) / 1024

    def stop(self) -> str:
        """Stop the table as Ctrl-C does; what it wrote to stderr."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(HANG)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.err.read_text()


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path)
    try:
        yield t
    finally:
        err = t.stop()
        print(f"the server's stderr:\n{err}")         # shown when a test fails (a 1011 says why there)
    assert "Traceback" not in err and "Exception in ASGI" not in err, err


def play(page: Page, moves: int) -> int:
    """Play `moves` of seat 2's decisions (the bot plays seat 1); the serial reached."""
    made, answered = 0, -1
    while True:
        msg = page.receive()
        if msg["type"] != "state":
            continue
        assert not msg["error"], msg["error"]
        if made == moves or msg["over"]:
            assert made == moves, "the game ended before the test could play"
            return msg["serial"]
        d = msg["decision"]
        if d and d["mine"] and d.get("options") and msg["serial"] > answered:
            answered = msg["serial"]
            page.send(json.dumps({"type": "choose", "option": answered % len(d["options"]), "serial": answered}))
            made += 1


def seat_connected(table: Table, seat: int) -> bool:
    """Whether `seat` has a page open, as the table tells seat 2 (its state's seats)."""
    with socket.create_connection(("127.0.0.1", table.port), timeout=HANG) as s:
        s.sendall(f"GET /api/seat/{table.token} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    state = json.loads(data.partition(b"\r\n\r\n")[2])
    return state["seats"][seat - 1]["connected"]


def test_a_page_that_sends_but_never_reads_is_dropped_with_4408_and_the_other_seat_plays_on(table):
    """Seat 1's page (watching its bot) sends junk and reads nothing, with a small receive
    buffer: the replies pile up, and once 64 wait it is dropped, without the server growing.
    Seat 2 plays all along; seat 1's page, when at last it reads, finds what it was sent and
    then close code 4408. (The same with the server's writer stuck on it: further down.)"""
    player = Page(table.port, table.token)
    serial = play(player, 2)
    slow = Page(table.port, table.bot_token, rcvbuf=4096)
    assert slow.status == 101 and slow.receive()["type"] == "hello"     # it is at the table: from now on it never reads
    before = table.memory_mb()
    deadline = time.monotonic() + HANG
    while seat_connected(table, 1):
        assert time.monotonic() < deadline, "the page that does not read was never dropped"
        send_junk(slow, 10)                     # the server reads on: this cannot block for long
        serial = max(serial, play(player, 1))   # and the other seat is not slowed down
    after = table.memory_mb()
    later = play(player, 3)
    assert later > serial
    with pytest.raises(Closed) as closed:
        while True:
            slow.receive()                      # everything it did not read, then the close frame
    assert closed.value.code == CLOSE_TOO_SLOW
    assert after - before < 100, f"the server grew from {before:.0f} MB to {after:.0f} MB"
    slow.close()
    player.close()


def test_200_connections_at_once_past_the_limit_are_answered_503_and_the_table_goes_on(table):
    """200 WebSockets opened at once (uvicorn alone upgrades them all, past its limit): those
    past the limit are answered 503, a page too while the table is full; once they close, the
    table serves again and the seat that was playing plays on."""
    player = Page(table.port, table.token)
    play(player, 1)
    pages = [Page(table.port, table.token) for _ in range(200)]
    statuses = [p.status for p in pages]
    accepted = statuses.count(101)
    assert 0 < accepted <= MAX_CONNECTIONS and statuses.count(503) == 200 - accepted, sorted(set(statuses))
    assert table.get("/") == 503            # the table is full: a page is refused too, not held
    for p in pages:
        p.close()
    assert table.get_until_ok("/") == 200
    play(player, 2)                         # the seat that was playing all along goes on
    again = Page(table.port, table.token)   # and a new page of it is accepted
    assert again.status == 101 and again.receive()["type"] == "hello"
    again.close()
    player.close()


def test_nested_brackets_get_an_error_and_the_server_stays_up(table):
    player = Page(table.port, table.token)
    serial = play(player, 1)
    for text, expected in (("[" * MAX_MESSAGE, "nested too deeply"), ("[" * 10_000, "too long"),
                           ('{"a":' * 600 + "1" + "}" * 600, "nested too deeply")):
        player.send(text)
        msg = player.receive()
        while msg["type"] != "error":
            msg = player.receive()
        assert expected in msg["message"]
    assert play(player, 2) > serial
    # Past 64 KiB a message is not even read: the connection is closed (1009, too big).
    big = Page(table.port, table.token)
    big.send("[" * 100_000)
    with pytest.raises(Closed) as closed:
        while True:
            big.receive()
    assert closed.value.code == 1009
    big.close()
    assert play(player, 1) > serial
    assert table.get("/") == 200
    player.close()


@pytest.mark.slow
def test_half_open_requests_are_closed_within_the_request_timeout(table):
    """Connections that send nothing, half a request, or one header byte at a time are all cut
    off (uvicorn alone holds them forever): the deadline is for the whole request."""
    def connect(first: bytes) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", table.port), timeout=HANG)
        s.sendall(first)
        return s
    stalled = [connect(b""), connect(b"GET / HT"), connect(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\n")]
    trickle = connect(b"GET / HTTP/1.1\r\n")
    # Keep-alive does not help either: after a whole request, a second one that stalls.
    kept = connect(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert kept.recv(12).startswith(b"HTTP/1.1 200")
    kept.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-B: ")
    started = time.monotonic()
    assert table.get("/") == 200                # meanwhile a whole request is served at once
    closed = []
    for s in stalled + [kept]:
        try:
            while s.recv(65536):                # what is left of the 200 response, then the end
                pass
        except ConnectionResetError:
            pass
        closed.append(s)
    try:
        while time.monotonic() - started < HANG:
            trickle.sendall(b"X")               # a byte of a header, every 0.2 s
            time.sleep(0.2)
        pytest.fail("a request sent one byte at a time was held open")
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert len(closed) == 4
    for s in closed + [trickle]:
        s.close()
    assert table.get("/") == 200


@contextlib.contextmanager
def serving(web: WebTable, ws_protocol):
    """uvicorn in a thread, with the table's protocols (the WebSocket one given) and small
    socket buffers, so that a page that does not read fills them after a few messages."""
    config = uvicorn.Config(create_app(web), log_level="warning", lifespan="on", http=TableHTTP, ws=ws_protocol)
    server = uvicorn.Server(config)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)     # the accepted connections inherit it
    sock.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + HANG
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        yield server, sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(HANG)


def stall_then_drop(server, web: WebTable, page: Page) -> None:
    """`page` reads nothing and sends junk, one message at a time (each answered before the
    next arrives), until the server has more than it may buffer for it and its writer must
    wait, as for a page slow to read rather than merely quick to send; then on until the
    table drops it."""
    proto = next(iter(server.server_state.connections))
    deadline = time.monotonic() + HANG
    while proto.writable.is_set():
        assert time.monotonic() < deadline, "the server never had to wait for the page"
        send_junk(page, 1, size=1)
    while web.connected[1]:
        assert time.monotonic() < deadline, "the page that does not read was never dropped"
        try:
            send_junk(page, 1)
        except (BrokenPipeError, ConnectionResetError):
            return                  # cut off already: it left no room for more (the write timeout)


@pytest.fixture
def mach_table():
    return WebTable(api.load_game(os.path.join(ROOT, "games", "mach_struggle.yaml")), 2, 5, {0: "random"})


def test_a_page_dropped_while_the_server_waits_for_it_still_gets_its_close_code(mach_table):
    """uvicorn writes nothing, a close frame included, while a page leaves too much unread:
    the close frame is queued behind the rest, so the page that catches up learns why it was
    dropped (4408) rather than seeing the connection simply end."""
    with serving(mach_table, TableWebSocket) as (server, port):
        slow = Page(port, mach_table.seat_token[1], rcvbuf=4096)
        assert slow.status == 101 and slow.receive()["type"] == "hello"
        stall_then_drop(server, mach_table, slow)
        with pytest.raises(Closed) as closed:
            while True:
                slow.receive()
        assert closed.value.code == CLOSE_TOO_SLOW
        slow.close()


class QuickWebSocket(TableWebSocket):
    write_timeout = 0.5


def test_a_page_that_stops_reading_gives_its_connection_back(mach_table):
    """Dropping a page from the table is not enough: its connection would wait forever for it
    to read what is queued, and hold a place in the connection limit. Past the write timeout
    (here 0.5 s, 20 s in `rulesvm serve`) it is aborted."""
    with serving(mach_table, QuickWebSocket) as (server, port):
        slow = Page(port, mach_table.seat_token[1], rcvbuf=4096)
        assert slow.status == 101 and slow.receive()["type"] == "hello"
        stall_then_drop(server, mach_table, slow)
        deadline = time.monotonic() + HANG
        while server.server_state.connections:             # it still reads nothing
            assert time.monotonic() < deadline, "the connection of a page that does not read is held"
            time.sleep(0.05)
        slow.close()
