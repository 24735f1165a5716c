"""How much one connection may hold of the web table's server: uvicorn's HTTP and WebSocket
protocols, with the bounds uvicorn leaves out. `cli/serve.py` runs uvicorn with them
(`http=TableHTTP, ws=TableWebSocket`, plus `limit_concurrency` and `timeout_keep_alive`).

- **A request arrives whole within REQUEST_TIMEOUT seconds** of the connection, or of its first
  byte on a kept-alive connection, whatever it sends meanwhile: a client that opens
  connections and sends nothing, half a request line or one header byte at a time
  ("slowloris") is cut off. uvicorn has no such timeout: `timeout_keep_alive` only covers the
  wait *between* requests and is reset by every byte received, and ASGI middleware runs only
  once a request is complete.
- **The connection limit holds for WebSockets too.** uvicorn answers an HTTP request past
  `limit_concurrency` with 503, but upgrades a WebSocket request before it looks; here the
  upgrade is refused with the same 503.
- **A page that does not read is cut off.** When more than the transport's high-water mark
  waits for a page for WRITE_TIMEOUT seconds, the connection is aborted (a close would wait
  for that page to read everything first, and hold its place in the limit forever). And a close
  frame (e.g. 4408 for a page whose messages piled up, see server.py) is queued even while the
  page is not reading: a page that catches up reads why it was dropped.
- **A page's kernel send buffer is SEND_BUFFER bytes**, not the megabytes Linux grows it to
  on its own: what a page leaves unread stays small (200 pages cannot pin a gigabyte of
  kernel memory), and a page that stops reading makes its messages pile up in the table
  within a few hundred kilobytes, where it is dropped with 4408 (server.py) long before the
  server's keepalive pings (20 s, then 20 s more, unanswered by a page that does not read)
  would close it with 1011 and no reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

REQUEST_TIMEOUT = 10.0      # seconds for a whole request (line, headers, body) to arrive
WRITE_TIMEOUT = 20.0        # seconds a page may leave unread what waits for it, past the high-water mark
SEND_BUFFER = 64 * 1024     # bytes of a page's kernel send buffer (Linux doubles it for its bookkeeping)
_ARRIVING = (h11.IDLE, h11.SEND_BODY)       # the client's states while a request is still on its way


class TableHTTP(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request and the connection limit on
    WebSocket upgrades."""

    request_timeout = REQUEST_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()                 # the first byte of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state not in _ARRIVING or self.transport.is_closing():
            self._disarm()              # the request is complete (or the connection over)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._disarm()                  # the request is whole: the WebSocket protocol takes over
        if self.limit_concurrency is not None and len(self.connections) >= self.limit_concurrency:
            self.logger.warning("Exceeded concurrency limit.")
            self._refuse_busy()
            return
        super().handle_websocket_upgrade(event)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.request_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.transport.get_write_buffer_size():
            self.transport.abort()      # it does not read either: do not wait for it to
        else:
            self.transport.close()

    def _refuse_busy(self) -> None:
        """Answer 503 and close, as uvicorn answers an HTTP request past the limit."""
        body = b"Service Unavailable: the table holds as many connections as it can"
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        for event in (h11.Response(status_code=503, headers=headers, reason=b"Service Unavailable"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


class TableWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol that cuts off a page which stops reading, and queues a
    close frame even to such a page."""

    write_timeout = WRITE_TIMEOUT
    _stalled: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):          # a platform that refuses: its default stands
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        super().connection_made(transport)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stalled is None:
            self._stalled = self.loop.call_later(self.write_timeout, self._cut_off)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unstall()

    def connection_lost(self, exc: Exception | None) -> None:
        self._unstall()
        super().connection_lost(exc)

    def _unstall(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def _cut_off(self) -> None:
        self._stalled = None
        if not self.disconnected:
            self.transport.abort()      # connection_lost follows: the page's handler sees it leave

    async def send(self, message) -> None:
        if (message["type"] == "websocket.close" and self.handshake_complete and not self.close_sent
                and not self.disconnected and not self.writable.is_set()):
            # uvicorn waits for the page to read before it writes anything, a close frame too:
            # queue it behind what the page has not read yet (nothing else is sent after it).
            self.writable.set()
            try:
                await super().send(message)     # does not wait now: the event is set
            finally:
                if not self.disconnected:
                    self.writable.clear()
            return
        await super().send(message)
