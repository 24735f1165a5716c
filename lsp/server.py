"""The language server (lsp: `rulesvm lsp`): the protocol's requests, each answered by one module.

pygls reads the editor's messages on stdin and writes answers on stdout. An opened or saved
file has its game checked as `rulesvm validate` checks it (alone and with each variant); an
edit has the game checked alone (or with the variant file being edited) a moment after the
last keystroke, on the editor's unsaved texts, in a worker thread so that hover and
completion answer meanwhile. Diagnostics go to every file of the game (checking.py); hover,
definition, completion and the outline read the declarations of the game's rules files
(declarations.py); formatting is `rulesvm fmt`'s. An open scenario file is run as
`rulesvm test` runs it (scenarios.py), again whenever its game is checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import re

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from rulesvm.dsl.diagnostics import DiagnosticError, Span
from rulesvm.dsl.files import display_path
from rulesvm.dsl.parser import parse_rules

from .checking import by_file, run_checks
from .completion import completion_items
from .declarations import Declarations, Decl
from .diagnostics import to_protocol
from .formatting import format_edits
from .games import GameFiles, find_game, is_yaml
from .hover import hover_text
from .outline import document_symbols
from .scenarios import check_scenario, is_scenario, scenario_game
from .positions import after_dot, code_point_column, path_of, to_range, uri_of, use_encoding, word_at

VERSION = "0.1.0"
# How long after a keystroke the game is checked, if no other keystroke came meanwhile.
DEBOUNCE = 0.02
# Declarations go to definition reaches (fields and per-card variables after a dot).
PARTIAL = re.compile(r"[A-Za-z0-9_]*$")
DEFINED = {"proc", "func", "phase", "ability", "zone", "var", "kind", "option", "event"}


class RulesServer(LanguageServer):
    """The server, with what it keeps between requests."""

    def __init__(self):
        super().__init__("rulesvm", VERSION)
        self.declarations = Declarations()
        self.parses: dict = {}              # game file -> the parses of its last check
        self.games: dict = {}               # path -> its GameFiles (or None), until a YAML file changes
        self.generation: dict = {}          # game file -> number of the latest check asked for
        self.published: dict = {}           # game file -> URIs given diagnostics
        self.check_lock: asyncio.Lock | None = None

    def texts(self) -> dict:
        """The editor's texts of the open rules and YAML files (path -> text)."""
        out = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = path_of(uri)
            if path.endswith(".rules") or is_yaml(path):
                out[path] = doc.source
        return out

    def read(self, path: str) -> str | None:
        """A file's text: the editor's if open, else the file's."""
        doc = self.workspace.text_documents.get(uri_of(path))
        if doc is not None:
            return doc.source
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def lines(self, path: str) -> list[str]:
        return (self.read(path) or "").splitlines()

    def game_of(self, path: str) -> GameFiles | None:
        if path not in self.games:
            self.games[path] = find_game(path, self.texts())
        return self.games[path]

    def forget_games(self, uri: str, opened: bool = False) -> None:
        """A YAML file changed (or a file was opened): which file belongs to which game may have too."""
        if opened or is_yaml(path_of(uri)):
            self.games.clear()

    def declarations_for(self, path: str) -> list[Decl]:
        """The declarations of the game `path` belongs to (of the file alone, without a game)."""
        game = self.game_of(path)
        files = game.rules if game is not None and game.rules else []
        return self.declarations.of_files(files if path in files else [*files, path], self.read)

    def publish(self, key: str, files: dict) -> None:
        """Send each file's diagnostics; a file given some before and not now gets an empty list."""
        cache: dict = {}

        def lines_for(p):
            if p not in cache:
                cache[p] = self.lines(p)
            return cache[p]
        uris = set()
        for path, diags in files.items():
            uri = uri_of(path)
            uris.add(uri)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[to_protocol(d, lines_for) for d in diags]))
        for uri in self.published.get(key, set()) - uris:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.published[key] = uris


server = RulesServer()


def _syntax_only(ls: RulesServer, path: str) -> None:
    """A rules file no game file names: its syntax errors alone."""
    text = ls.read(path) or ""
    try:
        parse_rules(text, display_path(path))
        diags = []
    except DiagnosticError as exc:
        diags = exc.diagnostics
    ls.publish(path, {path: diags})


@contextlib.asynccontextmanager
async def latest_request(ls: RulesServer, key: str, delay: float):
    """Inside the check lock (one check at a time), after `delay` (typing may go on): yields
    this request's generation for `key`, or None when a later request for `key` came since."""
    ls.generation[key] = gen = ls.generation.get(key, 0) + 1
    if delay:
        await asyncio.sleep(delay)
    if ls.check_lock is None:
        ls.check_lock = asyncio.Lock()
    async with ls.check_lock:
        yield gen if ls.generation.get(key) == gen else None


async def check_scenario_file(ls: RulesServer, path: str, delay: float = 0.0) -> None:
    """Run an open scenario file on the editor's texts and publish; a later edit gives way."""
    async with latest_request(ls, path, delay) as gen:
        if gen is None:
            return
        diags = await asyncio.to_thread(check_scenario, path, ls.texts())
    if ls.generation.get(path) == gen:
        ls.publish(path, {path: diags})


def scenarios_of(ls: RulesServer, game: str) -> list[str]:
    """The open scenario files that play `game`."""
    return [path for path, text in ls.texts().items() if is_scenario(path) and scenario_game(path, text) == game]


async def check(ls: RulesServer, uri: str, with_variants: bool, delay: float = 0.0) -> None:
    """Check the game of `uri` and publish, then run the open scenarios playing it; a later
    edit of the same game makes this one give way."""
    path = path_of(uri)
    if is_scenario(path):
        await check_scenario_file(ls, path, delay)
        return
    game = ls.game_of(path)
    if game is None:
        if path.endswith(".rules"):
            _syntax_only(ls, path)
        return
    key = game.game
    async with latest_request(ls, key, delay) as gen:
        if gen is None:
            return
        variant = game.variant_of(path)
        if variant is None and is_yaml(path) and path != game.game and "\nvariant:" in "\n" + (ls.read(path) or ""):
            variant = path              # a variant file whose `base:` is the game, not listed by it
        extra = (variant,) if variant else ()
        loop = asyncio.get_running_loop()

        def stale() -> bool:
            return ls.generation.get(key) != gen

        def partial(diags: list) -> None:    # the game alone, while its variants are checked
            loop.call_soon_threadsafe(lambda: stale() or ls.publish(key, by_file(game, diags, extra)))
        diags, ls.parses[key] = await asyncio.to_thread(run_checks, game, ls.texts(), variant, with_variants,
                                                        ls.parses.get(key), partial, stale)
    if not stale():
        ls.publish(key, by_file(game, diags, extra))
        for scenario in scenarios_of(ls, key):
            await check_scenario_file(ls, scenario)


@server.feature(types.INITIALIZED)
def initialized(ls: RulesServer, params: types.InitializedParams) -> None:
    use_encoding(str(ls.server_capabilities.position_encoding or "utf-16"))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: RulesServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.forget_games(params.text_document.uri, opened=True)
    await check(ls, params.text_document.uri, with_variants=True)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: RulesServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.forget_games(params.text_document.uri)
    await check(ls, params.text_document.uri, with_variants=False, delay=DEBOUNCE)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: RulesServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.forget_games(params.text_document.uri)
    await check(ls, params.text_document.uri, with_variants=True)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: RulesServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget_games(params.text_document.uri)
    await check(ls, params.text_document.uri, with_variants=False)      # the file on disk again


def _name_at(ls: RulesServer, uri: str, position: types.Position):
    path = path_of(uri)
    if not path.endswith(".rules"):
        return None
    lines = ls.lines(path)
    found = word_at(lines, position)
    if found is None:
        return None
    word, start, end = found
    return path, lines, word, start, end, after_dot(lines, position.line, start)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: RulesServer, params: types.HoverParams) -> types.Hover | None:
    found = _name_at(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    path, lines, word, start, end, attribute = found
    text = hover_text(word, attribute, ls.declarations_for(path))
    if text is None:
        return None
    where = to_range(Span(path, params.position.line + 1, start + 1, params.position.line + 1, end + 1), lines)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=where)


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: RulesServer, params: types.DefinitionParams) -> list[types.Location] | None:
    found = _name_at(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    path, _, word, _, _, attribute = found
    if attribute:
        targets = [d for d in ls.declarations_for(path) if d.name == word and
                   (d.kind == "field" or (d.kind == "var" and d.owner != "global"))]
    else:
        targets = [d for d in ls.declarations_for(path) if d.name == word and d.kind in DEFINED]
    return [types.Location(uri_of(d.path), to_range(d.name_span, ls.lines(d.path))) for d in targets] or None


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
def completion(ls: RulesServer, params: types.CompletionParams) -> types.CompletionList | None:
    path = path_of(params.text_document.uri)
    if not path.endswith(".rules"):
        return None
    lines = ls.lines(path)
    line = lines[params.position.line] if params.position.line < len(lines) else ""
    col = code_point_column(line, params.position.character)
    head = line[:col]
    start = len(head) - len(PARTIAL.search(head).group())      # where the name being written starts
    attribute = head[:start].rstrip().endswith(".")
    return types.CompletionList(is_incomplete=False,
                                items=completion_items(ls.declarations_for(path), attribute))


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: RulesServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
    path = path_of(params.text_document.uri)
    if not path.endswith(".rules"):
        return None
    return format_edits(path, ls.read(path) or "")


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def symbols(ls: RulesServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol] | None:
    path = path_of(params.text_document.uri)
    if not path.endswith(".rules"):
        return None
    text = ls.read(path) or ""
    return document_symbols(ls.declarations.of_file(path, text), text.splitlines())


def run() -> None:
    """Serve one editor over stdin and stdout until it says exit."""
    server.start_io()
