"""The host's routes: the lobby and the debug panel, reached with the host's token only.

    GET  /host/TOKEN                          the host's page (lobby, tables, panel)
    GET  /api/host/TOKEN                      the lobby's games, the bots, the tables
    POST /api/host/TOKEN/tables               open a table: {game, players, variants, options, seats, seed, undo, paused}
    GET  /api/host/TOKEN/tables/ID            the table's full state, log and seats (web/panel.py)
    POST /api/host/TOKEN/tables/ID/bots       {action: pause|run|step} or {action: delay, delay: SECONDS}
    POST /api/host/TOKEN/tables/ID/replay     the game so far in the replay viewer: {url}
    GET  /api/host/TOKEN/tables/ID/save       the save file (`rulesvm resume`), as a download
    GET  /api/host/TOKEN/tables/ID/log        the game log (`rulesvm replay`), as a download

A wrong token gets 404, as a wrong seat address does: a seat's token is not the host's. A
POST must come from the server's own pages (its Origin, when sent, is the server's) and is at
most MAX_BODY bytes of JSON.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .host import Host
from .lobby import LobbyError, bot_names
from .panel import host_state, log_text, replay_book, save_text, table_summary

MAX_BODY = 16 * 1024
MAX_DELAY = 10.0            # seconds between two bot moves, at most


def _no_host() -> JSONResponse:
    return JSONResponse({"error": "no host at this address: use the host address `rulesvm serve` printed"},
                        status_code=404)


def host_routes(host: Host, page: str, not_found, bot_delay: float) -> list[Route]:
    """The routes above; `page`: the host page's HTML; `not_found(what, hint)`: the 404 page."""

    def is_host(request: Request) -> bool:
        return secrets.compare_digest(request.path_params["token"].encode(), host.token.encode())

    def table_of(request: Request):
        return host.tables.get(request.path_params["table"]) if is_host(request) else None

    async def body_of(request: Request):
        """The request's JSON body, or a JSONResponse saying what is wrong with it."""
        origin = request.headers.get("origin")
        if origin and urlsplit(origin).netloc != request.headers.get("host"):
            return JSONResponse({"error": "the host's actions come from the host's page only"}, status_code=403)
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                return JSONResponse({"error": f"request larger than {MAX_BODY} bytes"}, status_code=413)
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return JSONResponse({"error": "the body is JSON"}, status_code=400)

    async def host_page(request: Request) -> Response:
        if not is_host(request):
            return not_found("No host at this address",
                             "The host's address is printed by <code>rulesvm serve</code> when it starts.")
        return HTMLResponse(page)

    async def overview(request: Request) -> Response:
        if not is_host(request):
            return _no_host()
        cat = host.catalogue
        return JSONResponse({
            "lobby": None if cat is None else {"folder": cat.folder, "games": cat.games,
                                               "skipped": [{"file": f, "reason": r} for f, r in cat.skipped]},
            "bots": bot_names(), "tables": [table_summary(i, t) for i, t in host.tables.items()]})

    async def open_table(request: Request) -> Response:
        if not is_host(request):
            return _no_host()
        data = await body_of(request)
        if isinstance(data, Response):
            return data
        if host.catalogue is None:
            return JSONResponse({"error": "this server plays one game: start `rulesvm serve FOLDER` for a lobby"},
                                status_code=400)
        try:
            checked = await asyncio.to_thread(host.catalogue.table_request, data)    # loads the game: not on the loop
            table_id, table = host.open(checked, bot_delay)
        except (LobbyError, ValueError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        table.kick()
        return JSONResponse({"table": table_summary(table_id, table)})

    async def state(request: Request) -> Response:
        table = table_of(request)
        if table is None:
            return _no_host()
        async with table.lock:
            return JSONResponse(host_state(request.path_params["table"], table))

    async def bots(request: Request) -> Response:
        table = table_of(request)
        if table is None:
            return _no_host()
        data = await body_of(request)
        if isinstance(data, Response):
            return data
        action = data.get("action") if isinstance(data, dict) else None
        if action not in ("pause", "run", "step", "delay"):
            return JSONResponse({"error": "`action` is pause, run, step or delay"}, status_code=400)
        delay = data.get("delay")
        if action == "delay" and (not isinstance(delay, (int, float)) or isinstance(delay, bool)
                                  or not 0 <= delay <= MAX_DELAY):
            return JSONResponse({"error": f"`delay` is a number of seconds from 0 to {MAX_DELAY:g}"}, status_code=400)
        table.control(action, float(delay) if action == "delay" else None)
        return JSONResponse({"bots": table_summary(request.path_params["table"], table)["bots"]})

    async def replay(request: Request) -> Response:
        table = table_of(request)
        if table is None:
            return _no_host()
        async with table.lock:
            book = await asyncio.to_thread(replay_book, table)
        return JSONResponse({"url": f"/replay/{host.add_book(book)}", "steps": book.steps})

    def download(kind: str):
        async def handler(request: Request) -> Response:
            table = table_of(request)
            if table is None:
                return _no_host()
            async with table.lock:
                text = save_text(table) if kind == "save" else log_text(table)
            name = f"{table.game.model.id}-{request.path_params['table']}.{'save.json' if kind == 'save' else 'jsonl'}"
            return Response(text, media_type="application/json" if kind == "save" else "application/x-ndjson",
                            headers={"content-disposition": f'attachment; filename="{name}"'})
        return handler

    return [
        Route("/host/{token}", host_page),
        Route("/api/host/{token}", overview),
        Route("/api/host/{token}/tables", open_table, methods=["POST"]),
        Route("/api/host/{token}/tables/{table}", state),
        Route("/api/host/{token}/tables/{table}/bots", bots, methods=["POST"]),
        Route("/api/host/{token}/tables/{table}/replay", replay, methods=["POST"]),
        Route("/api/host/{token}/tables/{table}/save", download("save")),
        Route("/api/host/{token}/tables/{table}/log", download("log")),
    ]
