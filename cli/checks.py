"""Commands that check and tidy game files without playing them: `validate`, `info`,
`test` (scenario files), `diff` (what a variant changes), `schema` and `fmt`.
"""

from __future__ import annotations

import difflib
import os
import sys
from typing import TYPE_CHECKING, List, Optional

import typer

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError

from .common import CARD_SET_OPT, GAME_ARG, SET_OPT, VARIANT_OPT, load, usage
from .lazy import lazy
from .paths import GAME_EXTS, require_file, require_path
from .render import Screen

if TYPE_CHECKING:
    from rulesvm.analysis import diff as variants_diff  # noqa: F401
    from rulesvm.interop import environment as research  # noqa: F401
    from rulesvm.testing import scenario, suite  # noqa: F401
    from rulesvm.tooling import formatter, schemas  # noqa: F401

# Each needed by one command only (see lazy.py).
variants_diff = lazy("rulesvm.analysis.diff")
scenario = lazy("rulesvm.testing.scenario")
suite = lazy("rulesvm.testing.suite")
schemas = lazy("rulesvm.tooling.schemas")
formatter = lazy("rulesvm.tooling.formatter")
research = lazy("rulesvm.interop.environment")      # `info --actions`: needs the rl extra (numpy)


def validate(
    paths: List[str] = typer.Argument(..., help="Game YAML files, or folders to search for them.", metavar="PATH..."),
    card_set: Optional[List[str]] = CARD_SET_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the diagnostics as JSON."),
    no_warnings: bool = typer.Option(False, "--no-warnings", help="Show errors only."),
) -> None:
    """Check game files: YAML, schema, rules scripts and card data. Exit 1 on errors."""
    screen = Screen()
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                files.extend(os.path.join(root, f) for f in sorted(names) if _is_game_file(os.path.join(root, f)))
        else:
            require_path(screen, p, "game", GAME_EXTS)
            files.append(p)
    if not files:
        usage(screen, "no game files found", "a game file is a YAML file with a `rules:` key")
    all_diags = []
    errors = 0
    for f in files:
        diags = api.validate_path(f, card_set or [])
        all_diags.extend(diags)
        errors += sum(1 for d in diags if d.is_error)
        if not as_json:
            screen.diagnostics(diags, warnings=not no_warnings)
            n_err = sum(1 for d in diags if d.is_error)
            n_warn = len(diags) - n_err
            status = "ok" if not n_err else f"{n_err} error(s)"
            screen.note(f"{f}: {status}" + (f", {n_warn} warning(s)" if n_warn and not no_warnings else ""))
    if as_json:
        screen.json({"files": files, "errors": errors,
                     "diagnostics": [d.to_json() for d in all_diags if d.is_error or not no_warnings]})
    raise typer.Exit(1 if errors else 0)


def _is_game_file(path: str) -> bool:
    """Game files (a top-level `rules:` key) and variant files (`variant:`) found in folders."""
    if not path.endswith((".yaml", ".yml")) or path.endswith(".scenario.yaml"):
        return False
    try:
        with open(path, encoding="utf-8") as fh:
            head = "\n" + fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return "\nrules:" in head or "\nvariant:" in head


def info(
    game: str = GAME_ARG,
    card_set: Optional[List[str]] = CARD_SET_OPT,
    set_: Optional[List[str]] = SET_OPT,
    variant: Optional[List[str]] = VARIANT_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    card: Optional[str] = typer.Option(None, "--card", help="Show one card: its fields and rule text "
                                       "(a card id, a copy's id such as knight#2, or its name).", metavar="CARD"),
    cards: bool = typer.Option(False, "--cards", help="List every card with its rule text, in card-file order."),
    actions: bool = typer.Option(False, "--actions", help="Show the game's action ids and observation tensor "
                                 "in OpenSpiel and PettingZoo (docs/research.md; needs the rl extra)."),
    players: Optional[int] = typer.Option(None, "--players", help="With --actions: the number of players."),
) -> None:
    """Show a game's players, options, variants, zones and cards; `--card`/`--cards`: what cards do."""
    screen = Screen()
    g = load(screen, game, card_set, variant, set_)
    if card is not None:
        found = api.find_card(g.model, card)
        if found is None:
            close = difflib.get_close_matches(card, [c.id for c in g.model.cards], 1)
            usage(screen, f"{g.name} has no card `{card}`",
                  f"did you mean `{close[0]}`?" if close else "`rulesvm info GAME --cards` lists them")
        screen.json(found) if as_json else screen.card(found)
        return
    if cards:
        listing = api.card_catalogue(g)
        screen.json(listing) if as_json else screen.card_list(listing)
        return
    if actions:
        return research_layout(screen, g, players, as_json)
    data = api.game_info(g)
    if as_json:
        screen.json(data)
    else:
        screen.info(data)


def research_layout(screen: Screen, game: api.Game, players: int | None, as_json: bool) -> None:
    """`info --actions`: the numbering of the game's actions and its observation tensor's pieces."""
    try:
        data = research.layout(research.environment_of(game, players))
    except ImportError as exc:
        usage(screen, f"--actions needs the research packages ({exc.name} is not installed)",
              "install them with pip install 'rulesvm[rl]'")
    except ValueError as exc:
        usage(screen, str(exc))
    if as_json:
        screen.json(data)
        return
    lines = [f"{data['game']}: {data['players']} players, {data['actions']} action ids, returns from {data['returns']}"]
    lines += [f"  {b['ids'][0]}-{b['ids'][1]}: {b['action']}" for b in data["blocks"] if b["ids"][0] <= b["ids"][1]]
    lines += [f"  {row['id']}: {row['action']}" for row in data["cards"] + data["values"]]
    lines.append(f"observation tensor: {data['observation']['size']} floats")
    lines += [f"  {p['piece']}: from {p['start']}, shape {tuple(p['shape'])}" for p in data["observation"]["pieces"]]
    typer.echo("\n".join(lines))


def test_scenarios(
    paths: Optional[List[str]] = typer.Argument(None, help="Scenario files (*.scenario.yaml) or folders to search; "
                                                "default: games/.", metavar="[PATH...]"),
    keyword: Optional[List[str]] = typer.Option(None, "-k", help="Run only the scenarios whose file path or `name` "
                                                "contains PATTERN (case-insensitive; repeatable: any of them).",
                                                metavar="PATTERN"),
    last_failed: bool = typer.Option(False, "--lf", "--last-failed", help="Run only the scenarios that failed the "
                                     "last time they ran (all of them if none did); remembered in .rulesvm_cache/."),
    jobs: int = typer.Option(1, "-j", "--jobs", help="Run N scenarios at a time in worker processes "
                             "(0: one per core).", metavar="N"),
) -> None:
    """Run scenario files: a line per scenario, then `N passed, N failed`. Exit 1 on any failure."""
    screen = Screen()
    paths = paths or ["games"]
    for p in paths:
        require_path(screen, p, "scenario", (".scenario.yaml",))
    if jobs < 0:
        usage(screen, f"-j {jobs}: give a number of processes, or 0 for one per core")
    files = scenario.find_scenarios(paths)
    if not files:
        usage(screen, "no scenario files (*.scenario.yaml) found in " + ", ".join(paths))
    files = [f for f in files if suite.matches(f, keyword or [])]
    if not files:
        usage(screen, "no scenario matches -k " + " -k ".join(keyword or []),
              "a pattern is part of a scenario's file path or `name`")
    remembered = suite.LastFailed.load(os.getcwd())
    if last_failed:
        again = remembered.select(files)
        if again:
            screen.note(f"running the {len(again)} scenario(s) that failed last time (of {len(files)})")
            files = again
        else:
            screen.note("no scenario failed last time: running all of them")
    counts = [0, 0]

    def show(result) -> None:
        screen.scenario_line(os.path.relpath(result.path), result)
        counts[result.passed] += 1

    results = suite.run_all(files, jobs or os.cpu_count() or 1, show)
    remembered.record(results)
    remembered.save()
    screen.summary_line(counts[1], counts[0])
    raise typer.Exit(1 if counts[0] else 0)


def diff(
    game: str = GAME_ARG,
    variant: List[str] = typer.Option(..., "--variant", help="The variant(s) to compare with the base game "
                                      "(name or file; repeatable, applied in order).", metavar="NAME|FILE"),
    card_set: Optional[List[str]] = CARD_SET_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the differences as one JSON object."),
) -> None:
    """Show what variants change: options, cards and rule parts (a unified diff)."""
    screen = Screen()
    require_file(screen, game)
    try:
        data = variants_diff.variant_diff(game, variant, card_set or [])
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except ValueError as exc:
        usage(screen, str(exc))
    if as_json:
        screen.json(data)
    else:
        screen.variant_diff(data)


def schema(
    game: Optional[str] = typer.Argument(None, help="A game's YAML file: type the cards by the card kinds its rules "
                                         "declare (default kind then: card-set).", metavar="GAME"),
    kind: Optional[str] = typer.Option(None, "--kind", help="The kind of file: game (the default), card-set, "
                                       "variant, scenario or hand.", metavar="KIND"),
    write: Optional[str] = typer.Option(None, "--write", help="Write the schema of every kind of file into DIR "
                                        "as KIND.schema.json (the repository keeps them in schema/).", metavar="DIR"),
) -> None:
    """Print the JSON Schema of a kind of YAML file, for editors that validate and complete it.

    Point a file at it with a first line `# yaml-language-server: $schema=PATH`.
    """
    screen = Screen()
    if write is not None:
        if game or kind:
            usage(screen, "--write writes every kind of file's schema: give it without GAME or --kind")
        for path in schemas.write_all(write):
            screen.note(f"wrote {path}")
        return
    if kind is not None and kind not in schemas.KINDS:
        usage(screen, f"--kind {kind}: unknown kind of file", "one of " + ", ".join(schemas.KINDS))
    if game is None:
        screen.document(schemas.to_text(schemas.schema_for(kind or "game")))
        return
    require_file(screen, game)
    kind = kind or "card-set"
    if kind not in schemas.CARD_KINDS:
        usage(screen, f"--kind {kind} has no cards to type by a game's card kinds",
              "with GAME use --kind " + ", ".join(schemas.CARD_KINDS))
    try:
        game_id, kinds = schemas.game_card_kinds(game)
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        screen.note(f"the game's rules have errors (run `rulesvm validate {game}`)")
        raise typer.Exit(1)
    screen.document(schemas.to_text(schemas.game_schema_for(kind, game_id, kinds)))


def fmt(
    paths: List[str] = typer.Argument(..., help="Rules files (*.rules), or folders to search for them; `-` formats "
                                      "standard input to standard output.", metavar="FILE..."),
    check: bool = typer.Option(False, "--check", help="Write nothing; list the files that would change and exit 1 "
                               "if there are any."),
    show_diff: bool = typer.Option(False, "--diff", help="Write nothing; print a unified diff of the changes."),
) -> None:
    """Format rules files canonically: one layout, 2-space indentation, comments kept.

    A file is rewritten only once the new text is checked to parse to exactly the same rules.

    A file with syntax errors is left as it is (exit 1).
    """
    screen = Screen()
    files = []
    for p in paths:
        if p == "-":
            files.append(p)
        elif os.path.isdir(p):
            found = [os.path.join(root, f) for root, _, names in sorted(os.walk(p)) for f in sorted(names)
                     if f.endswith(".rules")]
            if not found:
                usage(screen, f"no rules files (*.rules) in {p}")
            files.extend(found)
        else:
            require_path(screen, p, "rules", (".rules",))
            files.append(p)
    changed = failed = 0
    for path in files:
        try:
            if path == "-":
                text = sys.stdin.read().replace("\r\n", "\n")
                out = formatter.format_text(text, "<stdin>")
                result = None
            else:
                result = formatter.format_file(path)
                text, out = result.original, result.formatted
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            screen.note(f"{path}: not formatted: fix the errors first")
            failed += 1
            continue
        except formatter.FormatError as exc:
            screen.error(f"{path}: cannot be formatted safely ({exc})",
                         "the file is unchanged; please report this to the rulesvm developers")
            failed += 1
            continue
        except (OSError, ValueError) as exc:
            screen.error(f"{path}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}")
            failed += 1
            continue
        if path == "-" and not check and not show_diff:
            screen.document(out)
        if out == text:
            continue
        changed += 1
        if show_diff:
            screen.unified_diff(difflib.unified_diff(text.splitlines(True), out.splitlines(True), path,
                                                     f"{path} (formatted)"))
        if check and path != "-":
            screen.path_line(path)
        if result is not None and not check and not show_diff:
            try:
                formatter.write_atomically(path, out, result.newline)
            except OSError as exc:
                screen.error(f"{path}: cannot write: {exc.strerror or exc}", "the file is unchanged")
                failed += 1
                changed -= 1
    done = "would be reformatted" if check or show_diff else "reformatted"
    screen.note(f"{changed} file(s) {done}, {len(files) - changed - failed} unchanged"
                + (f", {failed} with errors" if failed else ""))
    raise typer.Exit(1 if failed or (check and changed) else 0)
