"""The web table's ASGI application (Starlette): pages, the seat WebSocket, the replay API.

    GET  /seat/TOKEN                 a seat's page (404 with an explanation for a wrong token)
    WS   /ws/TOKEN                   the seat's live connection (see table.py for messages)
    GET  /api/seat/TOKEN             the seat's current state as JSON (what the socket sends)
    GET  /replay/TOKEN               the replay viewer
    GET  /api/replay/TOKEN           the replay's summary; /api/replay/TOKEN/STEP?seat=N|all a step
    GET  /card-image/N               the N-th picture the game file names (nothing else on disk)
    GET  /card-image/TABLE/N         the same for a table opened from the lobby
    GET  /static/...                 the page's scripts and styles
    /host/TOKEN, /api/host/TOKEN/... the host's lobby and debug panel (host_api.py)

Each seat's address carries a random token: knowing the server's address is not enough to
sit at a seat. Responses forbid caching and framing, send no referrer (the token is in the
address) and allow only the page's own scripts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from .host import Host
from .host_api import host_routes
from .replay import ReplayBook
from .table import Rejected, Table
from .views import EVERYONE

LOG = logging.getLogger("rulesvm.web")

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
MAX_MESSAGE = 4096          # bytes: a page only ever sends an option number and a serial
MAX_NESTING = 8             # levels of [ and {: a page's message is one flat object
CLOSE_UNKNOWN_SEAT = 4404
CLOSE_FORBIDDEN = 4403
CLOSE_TOO_SLOW = 4408       # the page sent but did not read: its messages piled up (web/table.py MAX_OUTBOX)

HEADERS = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}


class SecurityHeaders:
    """Pure ASGI middleware: the headers above on every HTTP response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in HEADERS.items():
                    if key not in headers:
                        headers[key] = value
            await send(message)
        await self.app(scope, receive, send_with_headers)


def _page(name: str) -> str:
    with open(os.path.join(STATIC, name), encoding="utf-8") as fh:
        return fh.read()


def _not_found(what: str, hint: str) -> HTMLResponse:
    body = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Not found - rulesvm</title>"
            "<link rel='stylesheet' href='/static/table.css'></head><body class='message-page'><main>"
            f"<h1>{what}</h1><p>{hint}</p></main></body></html>")
    return HTMLResponse(body, status_code=404)


def create_app(table: Table | None = None, book: ReplayBook | None = None, host: Host | None = None,
               bot_delay: float = 0.6) -> Starlette:
    """The application for a live table, a replay, or a host's tables (a lobby); `bot_delay`:
    for tables opened from the lobby."""
    seat_page = _page("table.html")
    replay_page = _page("replay.html")
    if host is None:
        host = Host()
    if table is not None:
        host.add(table)
    if book is not None:
        host.add_book(book)

    async def home(request: Request) -> Response:
        return HTMLResponse("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>rulesvm table</title>"
                            "<link rel='stylesheet' href='/static/table.css'></head><body class='message-page'><main>"
                            "<h1>rulesvm table</h1><p>Open the address of your seat that <code>rulesvm serve</code> "
                            "printed in its terminal: each seat has its own secret address.</p></main></body></html>")

    async def seat(request: Request) -> Response:
        if host.seat(request.path_params["token"]) is None:
            return _not_found("No seat at this address",
                              "This table has no seat with that address. Check the address printed by "
                              "<code>rulesvm serve</code> (each seat has its own), or ask whoever started the table.")
        return HTMLResponse(seat_page)

    async def seat_state(request: Request) -> Response:
        found = host.seat(request.path_params["token"])
        if found is None:
            return JSONResponse({"error": "no seat at this address"}, status_code=404)
        at, s = found
        async with at.lock:
            return JSONResponse(at.state(s))

    async def socket(websocket: WebSocket) -> None:
        await _serve_seat(websocket, host)

    def replay_ok(token: str) -> bool:
        return token in host.books

    async def replay(request: Request) -> Response:
        if not replay_ok(request.path_params["token"]):
            return _not_found("No replay at this address",
                              "Check the address printed by <code>rulesvm serve --replay</code>.")
        return HTMLResponse(replay_page)

    async def replay_info(request: Request) -> Response:
        if not replay_ok(request.path_params["token"]):
            return JSONResponse({"error": "no replay at this address"}, status_code=404)
        return JSONResponse(host.books[request.path_params["token"]].info())

    async def replay_step(request: Request) -> Response:
        if not replay_ok(request.path_params["token"]):
            return JSONResponse({"error": "no replay at this address"}, status_code=404)
        step = request.path_params["step"]
        book = host.books[request.path_params["token"]]
        if not 0 <= step <= book.steps:
            return JSONResponse({"error": f"step {step} does not exist: steps are 0 to {book.steps}"},
                                status_code=404)
        who = request.query_params.get("seat", "all")
        if who == "all":
            seat_index = EVERYONE
        elif who.isdigit() and 1 <= int(who) <= book.players:
            seat_index = int(who) - 1
        else:
            return JSONResponse({"error": f"seat must be 1 to {book.players} or `all`, not `{who}`"}, status_code=400)
        return JSONResponse(book.view(step, seat_index))

    async def card_image(request: Request) -> Response:
        images = host.images(request.path_params.get("table"))
        path = images.path(request.path_params["number"]) if images is not None else None
        if path is None or not os.path.isfile(path):
            return Response("no such picture", status_code=404, media_type="text/plain")
        return FileResponse(path)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        for t in host.tables.values():
            t.kick()                # bots may move first
        yield

    routes = [
        Route("/", home),
        Route("/seat/{token}", seat),
        Route("/api/seat/{token}", seat_state),
        WebSocketRoute("/ws/{token}", socket),
        Route("/replay/{token}", replay),
        Route("/api/replay/{token}", replay_info),
        Route("/api/replay/{token}/{step:int}", replay_step),
        Route("/card-image/{number:int}", card_image),
        Route("/card-image/{table}/{number:int}", card_image),
        *host_routes(host, _page("host.html"), _not_found, bot_delay),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(SecurityHeaders)
    return app


async def _serve_seat(websocket: WebSocket, host: Host) -> None:
    """One seat's connection: its state as it changes, its choices to the table."""
    await websocket.accept()
    found = host.seat(websocket.path_params["token"])
    table, s = found if found is not None else (None, None)
    if s is None:
        await websocket.send_json({"type": "error", "fatal": True, "message": "no seat at this address: "
                                   "check the address printed by rulesvm serve"})
        await websocket.close(code=CLOSE_UNKNOWN_SEAT)
        return
    origin = websocket.headers.get("origin")
    if origin and urlsplit(origin).netloc != websocket.headers.get("host"):
        await websocket.send_json({"type": "error", "fatal": True,
                                   "message": "this table only talks to its own pages"})
        await websocket.close(code=CLOSE_FORBIDDEN)
        return
    listener = table.connect(s)
    await websocket.send_json(table.hello(s))

    async def writer() -> None:
        try:
            while True:
                await listener.wake.wait()
                listener.wake.clear()
                while listener.outbox:
                    await websocket.send_json(listener.outbox.pop(0))
                if listener.dirty:
                    listener.dirty = False
                    await websocket.send_json(table.state(s, listener))
        except asyncio.CancelledError:
            raise
        except Exception as exc:    # the page is gone (or a bug): end this connection, not the table
            # One line, no traceback: a page that vanished mid-send is ordinary, but the
            # reason must be visible when it is not (a flaky test showed a 1011 once).
            LOG.warning("seat %d: sending to its page failed (%s: %s); closing it with 1011",
                        s + 1, type(exc).__name__, exc)
            with contextlib.suppress(Exception):
                await websocket.close(code=1011)

    task = asyncio.get_running_loop().create_task(writer())
    table.kick()
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            error = await _handle_message(table, s, message.get("text"))
            if error is not None:
                listener.dirty = True       # the error, then the current state: the page is in step again
                listener.send({"type": "error", "message": error, "serial": table.version})
            if listener.overflow:
                break                       # it sends but does not read: drop this page, not the table
    finally:
        task.cancel()
        if listener.overflow:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(websocket.close(code=CLOSE_TOO_SLOW), 1)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        table.disconnect(listener)


async def _handle_message(table: Table, seat: int, text: str | None) -> str | None:
    """Hand a page's message to the table; what was wrong with it, or None."""
    if text is None:
        return "send text (JSON), not binary data"
    if len(text) > MAX_MESSAGE:
        return f"message too long ({len(text)} characters)"
    if _nesting(text) > MAX_NESTING:
        # Checked before parsing: Python's JSON parser recurses once per level.
        return f"message nested too deeply (more than {MAX_NESTING} levels of brackets)"
    try:
        data = json.loads(text)
    except ValueError:
        return "not JSON: a page sends {\"type\": \"choose\", \"option\": N, \"serial\": S}"
    try:
        await table.handle(seat, data)
    except Rejected as exc:
        return str(exc)
    return None


def _nesting(text: str) -> int:
    """How deeply the brackets of a JSON text nest (outside strings)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
