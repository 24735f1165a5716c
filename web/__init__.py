"""The web table: `rulesvm serve` plays any game in the browser (see docs/web.md).

    server.py   the Starlette application: seat pages, the seat WebSocket, the replay API
    table.py    one live game: seats and their tokens, bots, undo, what each seat is sent
    views.py    a seat's view, built from `Match.observation(seat)`; the public log
    layout.py   where zones lie and how they are drawn (the game's `layout:` hints + defaults)
    replay.py   a logged game's states, step by step, for the replay viewer
    static/     the pages: plain HTML, CSS and JavaScript modules (no build step)
"""
