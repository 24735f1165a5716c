"""The language server (lsp: `rulesvm lsp`): the protocol's requests, each answered by one module.

pygls reads the editor's messages on stdin and writes answers on stdout. An opened or saved
file has its game checked as `rulesvm validate` checks it (alone and with each variant); an
edit has the game checked alone (or with the variant file being edited) a moment after the
last keystroke, on the editor's unsaved texts, in a worker thread so that hover and
completion answer meanwhile. Diagnostics go to every file of the game (checking.py); hover,
definition, completion and the outline read the declarations of the game's rules files
(declarations.py); formatting is `rulesvm fmt`'s. An open scenario file is run as
`rulesvm test` runs it (scenarios.py), again whenever its game is checked. References,
rename, workspace symbols and what concerns card ids read where each name of the game
stands across its files (index.py, rename.py); semantic tokens colour a rules file's names
as the checker reads them (highlight.py); code actions apply "did you mean" (quickfix.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import re

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from rulesvm.dsl.diagnostics import DiagnosticError, Span
from rulesvm.dsl.files import display_path
from rulesvm.dsl.parser import parse_rules

from .checking import by_file, run_checks
from .highlight import TOKEN_MODIFIERS, TOKEN_TYPES, semantic_tokens
from .index import GLOBAL, GameIndex, Indexer, scenario_files, yaml_snippets
from .occurrences import ATTR, CARD, Occurrence, Symbol
from .outline import SYMBOL_KINDS
from .quickfix import quick_fixes
from .rename import Refused, renamable, rename_edits
from .completion import completion_items, yaml_items
from .declarations import Declarations, Decl
from .diagnostics import to_protocol
from .formatting import format_edits
from .games import GameFiles, find_game, game_files_in, is_yaml
from .hover import card_hover, hover_text
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
        self.indexer = Indexer()
        self.snippets: dict = {}            # game file -> the rules its YAML files hold (lsp/index.py)
        self.scenarios: dict = {}           # game file -> the scenario files playing it, until a YAML file changes

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

    def folders(self) -> list[str]:
        """The workspace's folders (its root, for a client without folders)."""
        found = [path_of(f.uri) for f in self.workspace.folders.values()]
        return found or ([self.workspace.root_path] if self.workspace.root_path else [])

    def lines(self, path: str) -> list[str]:
        return (self.read(path) or "").splitlines()

    def game_of(self, path: str) -> GameFiles | None:
        """The game of a file (of a scenario: the game it plays)."""
        if path not in self.games:
            played = scenario_game(path, self.read(path) or "") if is_scenario(path) else None
            self.games[path] = find_game(played or path, self.texts()) if not is_scenario(path) or played else None
        return self.games[path]

    def index_of(self, path: str) -> GameIndex | None:
        """Where the names of the game of `path` stand, across its files."""
        game = self.game_of(path)
        if game is None:
            return None
        return self.index_game(game)

    def index_game(self, game: GameFiles) -> GameIndex:
        if game.game not in self.scenarios:
            self.scenarios[game.game] = scenario_files(game, self.read, self.texts())
        return self.indexer.index(game, self.read, self.snippets.get(game.game, {}), self.scenarios[game.game])

    def occurrence_at(self, uri: str, position: types.Position):
        """(the game's index, the name at `position` or None, the word there or None)."""
        path = path_of(uri)
        index = self.index_of(path)
        lines = self.lines(path)
        found = word_at(lines, position)
        if index is None:
            return None, None, found[0] if found else None
        line = lines[position.line] if position.line < len(lines) else ""
        col = code_point_column(line, position.character) + 1
        return index, index.at(path, position.line + 1, col), found[0] if found else None

    def location(self, o: Occurrence) -> types.Location:
        return types.Location(uri_of(o.path), self.range_of(o))

    def range_of(self, o: Occurrence) -> types.Range:
        return to_range(Span(o.path, o.line, o.col, o.line, o.end_col), self.lines(o.path))

    def forget_games(self, uri: str, opened: bool = False) -> None:
        """A YAML file changed (or a file was opened): which file belongs to which game may have too."""
        if opened or is_yaml(path_of(uri)):
            self.games.clear()
            self.scenarios.clear()

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
        ls.snippets[key] = yaml_snippets(ls.snippets.get(key, {}), ls.parses[key])
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


def _in_text(found, position: types.Position) -> bool:
    """Whether the name found by `_name_at` stands inside a text (`card("x")`): an odd number
    of quotes before it on its line, escaped ones aside."""
    lines, start = found[1], found[3]
    head = lines[position.line][:start] if position.line < len(lines) else ""
    return re.sub(r"\\.", "", head).count('"') % 2 == 1


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


def _markdown(text: str) -> types.MarkupContent:
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)


def _game_name_hover(ls: RulesServer, params: types.HoverParams) -> types.Hover | None:
    """Hover on a name the game's index knows: a card id anywhere, or a name in a YAML file."""
    path = path_of(params.text_document.uri)
    index, occ, _ = ls.occurrence_at(params.text_document.uri, params.position)
    if occ is None:
        return None
    if occ.symbol.space == CARD:
        entry = index.cards.get(occ.symbol.name)
        text = card_hover(entry) if entry is not None else None
    elif path.endswith(".rules"):
        return None
    else:
        text = hover_text(occ.symbol.name, occ.symbol.space == ATTR, ls.declarations_for(path))
    return types.Hover(contents=_markdown(text), range=ls.range_of(occ)) if text else None


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: RulesServer, params: types.HoverParams) -> types.Hover | None:
    found = _name_at(ls, params.text_document.uri, params.position)
    if found is None or _in_text(found, params.position):
        shown = _game_name_hover(ls, params)
        if shown is not None or found is None:
            return shown
    path, lines, word, start, end, attribute = found
    text = hover_text(word, attribute, ls.declarations_for(path))
    if text is None:
        return None
    where = to_range(Span(path, params.position.line + 1, start + 1, params.position.line + 1, end + 1), lines)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=where)


def _index_definition(ls: RulesServer, params: types.DefinitionParams) -> list[types.Location] | None:
    """Definition of a name the game's index knows: a card id's entry, a name in a YAML file."""
    index, occ, _ = ls.occurrence_at(params.text_document.uri, params.position)
    if occ is None or occ.symbol.space not in GLOBAL:
        return None
    if occ.symbol.space == CARD:
        entry = index.cards.get(occ.symbol.name)
        return [ls.location(Occurrence(occ.symbol, entry.path, entry.line, entry.col, True))] if entry else None
    return [ls.location(o) for o in index.declarations(occ.symbol)] or None


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: RulesServer, params: types.DefinitionParams) -> list[types.Location] | None:
    found = _name_at(ls, params.text_document.uri, params.position)
    if found is None or _in_text(found, params.position):
        targets = _index_definition(ls, params)
        if targets is not None or found is None:
            return targets
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
    if is_yaml(path):
        index = ls.index_of(path)
        if index is None:
            return None
        return types.CompletionList(is_incomplete=False, items=yaml_items(
            index, ls.declarations_for(path), ls.lines(path), params.position))
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


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
def references(ls: RulesServer, params: types.ReferenceParams) -> list[types.Location] | None:
    index, occ, _ = ls.occurrence_at(params.text_document.uri, params.position)
    if occ is None or occ.symbol.space not in GLOBAL:
        return None
    found = [o for o in index.of(occ.symbol) if params.context.include_declaration or not o.declaration]
    if occ.symbol.space == CARD and params.context.include_declaration:
        entry = index.cards.get(occ.symbol.name)
        found += [Occurrence(occ.symbol, entry.path, entry.line, entry.col, True)] if entry else []
    unique = sorted({(o.path, o.line, o.col): o for o in found}.values(), key=lambda o: (o.path, o.line, o.col))
    return [ls.location(o) for o in unique] or None


def _refuse(reason: str):
    return JsonRpcException(reason, code=types.LSPErrorCodes.RequestFailed)


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(ls: RulesServer, params: types.PrepareRenameParams):
    index, occ, word = ls.occurrence_at(params.text_document.uri, params.position)
    try:
        occ = renamable(index, occ, word) if index is not None else renamable(GameIndex(), None, word)
    except Refused as exc:
        raise _refuse(str(exc)) from None
    return types.PrepareRenamePlaceholder(range=ls.range_of(occ), placeholder=occ.symbol.name)


@server.feature(types.TEXT_DOCUMENT_RENAME)
def rename(ls: RulesServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    index, occ, word = ls.occurrence_at(params.text_document.uri, params.position)
    try:
        occ = renamable(index, occ, word) if index is not None else renamable(GameIndex(), None, word)
        spots = rename_edits(index, occ, params.new_name)
    except Refused as exc:
        raise _refuse(str(exc)) from None
    changes = {}
    for path, places in spots.items():
        lines = ls.lines(path)
        changes[uri_of(path)] = [types.TextEdit(to_range(Span(path, line, col, line, end), lines), params.new_name)
                                 for line, col, end in places]
    return types.WorkspaceEdit(changes=changes)


@server.feature(types.WORKSPACE_SYMBOL)
def workspace_symbols(ls: RulesServer, params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
    """The declarations and card ids of the games of the open files (and of the workspace's
    game files) whose name contains the query (case aside)."""
    query = params.query.lower()
    games = {}
    for path in [*ls.texts(), *game_files_in(ls.folders())]:
        game = ls.game_of(path)
        if game is not None:
            games.setdefault(game.game, game)
    out = []
    for game in games.values():
        for d in ls.declarations.of_files(game.rules, ls.read):
            if query in d.name.lower():
                out.append(types.SymbolInformation(
                    name=d.name, kind=SYMBOL_KINDS.get(d.kind, types.SymbolKind.Function),
                    location=types.Location(uri_of(d.path), to_range(d.name_span, ls.lines(d.path))),
                    container_name=d.owner if d.kind == "field" else display_path(game.game)))
        index = ls.index_game(game)
        for card in index.cards.values():
            if query in card.id.lower():
                where = Occurrence(Symbol(CARD, card.id), card.path, card.line, card.col, True)
                out.append(types.SymbolInformation(name=card.id, kind=types.SymbolKind.Object,
                                                   location=ls.location(where), container_name="card"))
    return out


LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)


def _tokens(ls: RulesServer, uri: str, first: int = 0, last: int | None = None) -> types.SemanticTokens | None:
    path = path_of(uri)
    if not path.endswith(".rules"):
        return None
    text = ls.read(path) or ""
    return types.SemanticTokens(data=semantic_tokens(ls.indexer.rules_names(path, text), ls.declarations_for(path),
                                                     text, first, last))


@server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
def tokens_full(ls: RulesServer, params: types.SemanticTokensParams) -> types.SemanticTokens | None:
    return _tokens(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
def tokens_range(ls: RulesServer, params: types.SemanticTokensRangeParams) -> types.SemanticTokens | None:
    end = params.range.end
    return _tokens(ls, params.text_document.uri, params.range.start.line, end.line - (end.character == 0))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_actions(ls: RulesServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    path = path_of(params.text_document.uri)
    return quick_fixes(params.text_document.uri, ls.lines(path), params.context.diagnostics) or None


def run() -> None:
    """Serve one editor over stdin and stdout until it says exit."""
    server.start_io()
