"""The web table: `rulesvm serve` plays any game in the browser (see docs/web.md).

    server.py   the Starlette application: seat pages, the seat WebSocket, the replay API
    table.py    one live game: seats and their tokens, bots, undo, what each seat is sent
    views.py    a seat's view, built from `Match.observation(seat)`; the public log
    layout.py   where zones lie and how they are drawn (the game's `layout:` hints + defaults)
    replay.py   a logged game's states, step by step, for the replay viewer
    widgets.py  the layout's widgets (tracks, counters, dice) resolved for the game's options
    host.py     the host's token and the server's tables; lobby.py the games of a folder;
    panel.py    what only the host sees; host_api.py the host's routes (lobby and panel)
    static/     the pages: plain HTML, CSS and JavaScript modules (no build step)
"""
