"""rulesvm.cli: the command line (Typer), the top of the pipeline: it reads options, calls
the API and the tools built on it, and shows the results.

    main.py        the app: the commands in `rulesvm --help` order, and `main()`
    play.py        run, resume, replay: one game at the terminal
    checks.py      validate, info, test, diff, schema, fmt: game files, not played
    simulation.py  simulate, compare, agents: many games with bots
    serve.py       serve: the web table and the replay viewer in the browser
    common.py      the shared options, usage errors, loading a game, seats, the --log file
    human.py       a person at the terminal, as an agent
    render.py      everything printed (diagnostics, boards, tables)
"""
