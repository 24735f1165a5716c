"""The language server end to end (`rulesvm lsp`, lsp/): a client talks to it over stdio
(pytest-lsp) about a copy of the tutorial game, as an editor would."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import glob
import os
import re
import shutil
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from rulesvm import api
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.dsl.diagnostics import Span
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.parser import DECLARATION_KEYWORDS, parse_rules, parse_whole_rules
from rulesvm.dsl.parts import top_level_parts
from rulesvm.dsl.reading import given_texts, read_bytes
from rulesvm.dsl.remembered import remembered_parses
from rulesvm.lsp.declarations import strip_comment
from rulesvm.lsp.checking import run_checks
from rulesvm.lsp.diagnostics import code_link
from rulesvm.lsp.games import find_game
from rulesvm.lsp.index import GameIndex, Indexer, scenario_files, yaml_snippets
from rulesvm.lsp.occurrences import ATTR, NAME, Occurrence, Symbol
from rulesvm.lsp.rename import Refused, renamable, rename_edits
from rulesvm.lsp.hover import hover_text, primitive_hover
from rulesvm.lsp.positions import to_range, use_encoding, word_at
from rulesvm.lsp.server import LEGEND
from rulesvm.testing.scenario import run_scenario
from rulesvm.tooling.formatter import format_text

from .conftest import GAMES_DIR

# The tests share one server (started once for the module) and so one event loop.
shared_server = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def game_dir(tmp_path_factory):
    """A copy of the tutorial game, edited by the tests."""
    folder = tmp_path_factory.mktemp("lsp") / "tutorial"
    shutil.copytree(os.path.join(GAMES_DIR, "tutorial"), folder)
    return folder


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "rulesvm.cli.main", "lsp"]))
async def client(lsp_client: LanguageClient, game_dir):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=game_dir.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def diagnostics_until(client: LanguageClient, uri: str, done, timeout: float = 30.0) -> list:
    """Wait until the diagnostics last published for `uri` satisfy `done`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if uri in client.diagnostics and done(client.diagnostics[uri]):
            return list(client.diagnostics[uri])
        await asyncio.sleep(0.05)
    raise AssertionError(f"no such diagnostics for {uri}: {client.diagnostics.get(uri)}")


def _open(client: LanguageClient, path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="rulesvm", version=version, text=text)))
    return uri


def _open_rules(client: LanguageClient, game_dir) -> tuple[str, str]:
    """Open the game's rules file as it is on disk: (its text, its uri)."""
    path = game_dir / "crazy_eights.rules"
    text = path.read_text(encoding="utf-8")
    return text, _open(client, path, text)


def _change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))


def _position(text: str, needle: str, offset: int = 0) -> types.Position:
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return types.Position(line, index - (text.rfind("\n", 0, index) + 1))


@shared_server
async def test_a_mistake_is_shown_where_it_is_and_cleared_once_fixed(client: LanguageClient, game_dir):
    path = game_dir / "crazy_eights.rules"
    good = path.read_text(encoding="utf-8")
    bad = good.replace("move(top(stock), discard)\n", "move(top(stock), discrad)\n", 1)
    assert bad != good
    uri = _open(client, path, bad)          # unsaved: the file on disk is still right
    diags = await diagnostics_until(client, uri, lambda ds: any("discrad" in d.message for d in ds))
    (diag,) = [d for d in diags if "discrad" in d.message]
    start = _position(bad, "discrad)")
    assert diag.range.start == start
    assert diag.range.end == types.Position(start.line, start.character + len("discrad"))
    assert diag.source == "rulesvm" and diag.code.startswith("E")
    assert "hint: did you mean `discard`?" in diag.message
    with given_texts({str(path): bad}):                 # what `rulesvm validate` says of that text
        (expected,) = [d for d in api.validate_game(str(game_dir / "crazy_eights.yaml")) if "discrad" in d.message]
    assert (diag.code, diag.message) == (expected.code, f"{expected.message}\nhint: {expected.hint}")
    assert (diag.range.start.line + 1, diag.range.start.character + 1) == (expected.span.line, expected.span.col)
    assert diag.code_description is not None and "errors.md#" in diag.code_description.href
    _change(client, uri, good, 2)
    await diagnostics_until(client, uri, lambda ds: len(ds) == 0)


@shared_server
async def test_hover_on_a_primitive_shows_its_signature(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), _position(text, "shuffle(stock)", 2)))
    assert hover is not None and PRIMITIVES["shuffle"].signature in hover.contents.value
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), _position(text, "follow = top", 1)))
    assert "the suit to follow" in hover.contents.value        # a variable's doc comment


@shared_server
async def test_definition_of_a_procedure(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    found = await client.text_document_definition_async(types.DefinitionParams(
        types.TextDocumentIdentifier(uri), _position(text, "turn_starter()\n}", 3)))
    (location,) = found
    assert location.uri == uri
    assert location.range.start == _position(text, "turn_starter() {")


@shared_server
async def test_completion_offers_zones_and_fields(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    at = _position(text, "shuffle(stock)", len("shuffle(st"))
    found = await client.text_document_completion_async(types.CompletionParams(types.TextDocumentIdentifier(uri), at))
    labels = {item.label for item in found.items}
    assert {"stock", "discard", "hand", "shuffle", "follow", "turn_starter"} <= labels
    snippet = next(item for item in found.items if item.label == "move")
    assert snippet.insert_text.startswith("move(${1:") and snippet.insert_text_format == types.InsertTextFormat.Snippet
    at = _position(text, "top(stock).rank", len("top(stock)."))
    found = await client.text_document_completion_async(types.CompletionParams(types.TextDocumentIdentifier(uri), at))
    labels = {item.label for item in found.items}
    assert {"rank", "suit", "owner"} <= labels and "shuffle" not in labels


@shared_server
async def test_formatting_and_outline(client: LanguageClient, game_dir):
    path = game_dir / "crazy_eights.rules"
    text = path.read_text(encoding="utf-8")
    messy = text.replace("zone stock: ordered, hidden", "zone stock:   ordered,hidden", 1)
    uri = _open(client, path, messy, 3)
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        types.TextDocumentIdentifier(uri), types.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert len(edits) == 1 and edits[0].new_text == format_text(messy)
    assert "zone stock: ordered, hidden" in edits[0].new_text
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        types.TextDocumentIdentifier(uri)))
    names = {s.name: s for s in symbols}
    assert {"playing_card", "stock", "hand_size", "follow", "turn_starter", "cards_dealt"} <= set(names)
    assert {c.name for c in names["playing_card"].children} == {"rank", "suit"}


@shared_server
async def test_a_card_set_mistake_is_shown_in_the_card_set(client: LanguageClient, game_dir):
    path = game_dir / "deck.yaml"
    text = path.read_text(encoding="utf-8")
    bad = text.replace("rank: 5, suit: clubs", "rank: five, suit: clubs", 1)
    uri = _open(client, path, bad)
    diags = await diagnostics_until(client, uri, lambda ds: len(ds) > 0)
    assert diags[0].range.start.line == bad[:bad.index("rank: five")].count("\n")
    _change(client, uri, text, 2)
    await diagnostics_until(client, uri, lambda ds: len(ds) == 0)


def test_every_primitive_has_hover_text():
    for name, prim in PRIMITIVES.items():
        text = hover_text(name, False, [])
        assert text == primitive_hover(prim)
        assert prim.signature in text and prim.doc in text, name


def test_every_code_links_to_its_section_of_the_error_list():
    assert code_link("E203").endswith("errors.md#names-and-declarations-e201-e235")
    assert code_link("W401").endswith("#warnings-w401-w406")
    assert code_link("R900").endswith("#runtime-errors-r001-r016-r900")


@shared_server
async def test_a_variant_is_checked_while_it_is_edited(client: LanguageClient, game_dir):
    path = game_dir / "variants" / "draw_one.yaml"
    text = path.read_text(encoding="utf-8")
    bad = text.replace("draw_card(p)", "draw_crad(p)", 1)
    uri = _open(client, path, text)
    _change(client, uri, bad, 2)
    diags = await diagnostics_until(client, uri, lambda ds: any("draw_crad" in d.message for d in ds))
    (diag,) = [d for d in diags if "draw_crad" in d.message]
    assert diag.range.start == _position(bad, "draw_crad")
    _change(client, uri, text, 3)
    await diagnostics_until(client, uri, lambda ds: len(ds) == 0)


def test_given_texts_are_read_instead_of_the_files_only_within_the_block(tmp_path):
    path = tmp_path / "x.rules"
    path.write_text("zone a: ordered\n", encoding="utf-8")
    with given_texts({str(path): "zone b: ordered\n"}):
        assert read_bytes(str(path)) == b"zone b: ordered\n"
    assert read_bytes(str(path)) == b"zone a: ordered\n"


def test_remembered_parses_serve_the_next_check_only():
    text = "zone a: ordered\n"
    assert parse_rules(text, "x.rules") is not parse_rules(text, "x.rules")    # the command line: parsed each time
    with remembered_parses({}) as first:
        tree = parse_rules(text, "x.rules")
        assert parse_rules(text, "x.rules") is tree
    with remembered_parses(first) as second:
        assert parse_rules(text, "x.rules") is tree
    with remembered_parses(second) as third:
        parse_rules("zone b: ordered\n", "x.rules")
    with remembered_parses(third):
        assert parse_rules(text, "x.rules") is not tree       # not used by the check before: forgotten


@shared_server
async def test_a_scenario_is_run_as_it_is_edited(client: LanguageClient, game_dir):
    path = game_dir / "scenarios" / "deal.scenario.yaml"
    text = path.read_text(encoding="utf-8")
    bad = text.replace('"count(discard) == 1"', '"count(discard) == 2"', 1)
    uri = _open(client, path, bad)
    diags = await diagnostics_until(client, uri, lambda ds: len(ds) > 0)
    assert diags[0].code == "failed" and "count(discard) == 2" in diags[0].message
    assert diags[0].range.start.line == _position(bad, "count(discard) == 2").line
    _change(client, uri, text, 2)
    await diagnostics_until(client, uri, lambda ds: len(ds) == 0)


def _same_tree(a, b) -> bool:
    """Two parses alike, spans included."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return all(_same_tree(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_tree(x, y) for x, y in zip(a, b))
    return a == b


def test_a_rules_file_parsed_by_parts_is_parsed_as_a_whole():
    """While parses are remembered, a rules file is parsed declaration by declaration: the
    same tree, spans included, or the same syntax errors, for every rules file of the repository."""
    root = os.path.dirname(GAMES_DIR)
    paths = sorted(glob.glob(os.path.join(root, "games", "**", "*.rules"), recursive=True) +
                   glob.glob(os.path.join(root, "tests", "**", "*.rules"), recursive=True))
    assert len(paths) > 100
    for path in paths:
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        try:
            whole = parse_whole_rules(text, path)
        except DiagnosticError as exc:
            whole = [str(d) for d in exc.diagnostics]
        with remembered_parses({}) as memo:
            try:
                by_parts = parse_rules(text, path)
            except DiagnosticError as exc:
                by_parts = [str(d) for d in exc.diagnostics]
        assert _same_tree(whole, by_parts), path
    text = open(os.path.join(GAMES_DIR, "tutorial", "crazy_eights.rules"), encoding="utf-8").read()
    parts = top_level_parts(text, DECLARATION_KEYWORDS)
    assert len(parts) > 10 and "".join(part for _, part in parts) == text
    with remembered_parses({}) as memo:
        before = parse_rules(text, "x.rules")
    edited = text.replace("shuffle(stock)", "shuffle( stock )", 1)          # one declaration edited
    with remembered_parses(memo):
        after = parse_rules(edited, "x.rules")
    changed = [i for i, (a, b) in enumerate(zip(before.decls, after.decls)) if a is not b]
    assert len(changed) == 1 and before.decls[changed[0]].kind == "setup"   # the others: not parsed again


def test_a_check_remembers_yaml_and_changes_none_of_it(tmp_path):
    """The language server's checks keep the YAML they read from one check to the next: the
    same diagnostics, and the data kept unchanged by the checks that use it."""
    folder = tmp_path / "tutorial"
    shutil.copytree(os.path.join(GAMES_DIR, "tutorial"), folder)
    game_file = str(folder / "crazy_eights.yaml")
    expected = [str(d) for d in api.validate_game(game_file)]
    with remembered_parses({}) as memo:
        assert [str(d) for d in api.validate_game(game_file)] == expected
    kept = {key: copy.deepcopy(value[0]) for key, value in memo.items() if key[0] == "load_yaml_text"}
    assert len(kept) >= 2                                    # the game file and its card set
    with remembered_parses(memo) as again:
        assert [str(d) for d in api.validate_game(game_file)] == expected
    assert all(again[key][0] is memo[key][0] and again[key][0] == value for key, value in kept.items())


def test_columns_count_in_the_code_units_agreed_with_the_client():
    line = 'log("ジャ𝄞") discrad'
    span = Span("x.rules", 1, line.index("discrad") + 1, 1, len(line) + 1)
    try:
        expected = {"utf-16": 12, "utf-8": 18, "utf-32": 11}
        for encoding, column in expected.items():
            use_encoding(encoding)
            where = to_range(span, [line])
            assert (where.start.character, where.end.character) == (column, column + 7), encoding
            assert word_at([line], where.start)[0] == "discrad"
    finally:
        use_encoding("utf-16")


def _at(client_text: str, needle: str, offset: int = 0) -> types.Position:
    return _position(client_text, needle, offset)


def _edited(text: str, edits: list) -> str:
    """`text` with the protocol's edits applied (columns counted in code points: ASCII here)."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = edit.range.start, edit.range.end
        assert start.line == end.line
        line = lines[start.line]
        lines[start.line] = line[:start.character] + edit.new_text + line[end.character:]
    return "\n".join(lines)


@shared_server
async def test_references_of_a_zone_across_rules_and_scenarios(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri), position=_at(text, "shuffle(stock)", len("shuffle(")),
        context=types.ReferenceContext(include_declaration=True)))
    by_uri: dict = {}
    for location in found:
        by_uri.setdefault(location.uri, []).append(location.range.start)
    assert _at(text, "stock: ordered", 0) in by_uri[uri]                       # the declaration
    # every `stock` of the code, in texts only where interpolated (`"{top(stock)} is buried in the stock"`)
    code = [re.sub(r'"[^"]*"', lambda m: " ".join(re.findall(r"\{([^}]*)\}", m.group())), strip_comment(line)[0])
            for line in text.split("\n")]
    assert len(by_uri[uri]) == sum(len(re.findall(r"\bstock\b", line)) for line in code) == 14
    scenario = game_dir / "scenarios" / "draw_one.scenario.yaml"
    scenario_text = scenario.read_text(encoding="utf-8")
    assert _at(scenario_text, "stock: [hearts_queen") in by_uri[scenario.as_uri()]   # a scenario's setup
    deal = game_dir / "scenarios" / "deal.scenario.yaml"
    assert _at(deal.read_text(encoding="utf-8"), "stock) == 52", 0) in by_uri[deal.as_uri()]   # an expectation


@shared_server
async def test_rename_a_field_across_the_rules_and_the_card_set(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    at = _at(text, "c.suit == follow", 2)
    prepared = await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        types.TextDocumentIdentifier(uri), at))
    assert prepared.placeholder == "suit" and prepared.range.start == at
    edit = await client.text_document_rename_async(types.RenameParams(types.TextDocumentIdentifier(uri), at, "colour"))
    deck = game_dir / "deck.yaml"
    rules_after = _edited(text, edit.changes[uri])
    deck_after = _edited(deck.read_text(encoding="utf-8"), edit.changes[deck.as_uri()])
    assert "c.colour == follow" in rules_after and "suit: text" not in rules_after and "colour: text" in rules_after
    assert "suit:" not in deck_after and deck_after.count("colour: ") == 52
    assert "# the suit to follow" in rules_after           # comments untouched
    with given_texts({str(game_dir / "crazy_eights.rules"): rules_after, str(deck): deck_after}):
        assert not [d for d in api.validate_game(str(game_dir / "crazy_eights.yaml")) if d.is_error]


@shared_server
async def test_rename_a_variable_across_rules_and_scenarios(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    edit = await client.text_document_rename_async(types.RenameParams(
        types.TextDocumentIdentifier(uri), _at(text, "follow = top", 1), "suit_to_follow"))
    deal = game_dir / "scenarios" / "deal.scenario.yaml"
    assert "suit_to_follow == top(discard).suit" in _edited(deal.read_text(encoding="utf-8"), edit.changes[deal.as_uri()])
    rules_after = _edited(text, edit.changes[uri])
    assert "var suit_to_follow: text" in rules_after and "({suit_to_follow})" in rules_after
    assert "the suit to follow" in rules_after


@shared_server
async def test_rename_refuses_primitives_clashes_and_non_names(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    with pytest.raises(Exception, match="primitive of the rules language"):
        await client.text_document_prepare_rename_async(types.PrepareRenameParams(
            types.TextDocumentIdentifier(uri), _at(text, "shuffle(stock)", 1)))
    with pytest.raises(Exception, match="keyword"):
        await client.text_document_prepare_rename_async(types.PrepareRenameParams(
            types.TextDocumentIdentifier(uri), _at(text, "zone stock", 1)))
    at = _at(text, "follow = top", 1)
    with pytest.raises(Exception, match=r"`stock` is already declared by this game \(zone\)"):
        await client.text_document_rename_async(types.RenameParams(types.TextDocumentIdentifier(uri), at, "stock"))
    with pytest.raises(Exception, match="not a name"):
        await client.text_document_rename_async(types.RenameParams(types.TextDocumentIdentifier(uri), at, "2nd"))
    with pytest.raises(Exception, match="keyword"):
        await client.text_document_rename_async(types.RenameParams(types.TextDocumentIdentifier(uri), at, "while"))
    broken = text.replace("shuffle(stock)\n", "shuffle(stock\n", 1)           # a syntax error
    _change(client, uri, broken, 30)
    with pytest.raises(Exception, match="crazy_eights.rules has syntax errors: fix them first"):
        await client.text_document_rename_async(types.RenameParams(types.TextDocumentIdentifier(uri), at, "suit_now"))
    _change(client, uri, text, 31)


@shared_server
async def test_workspace_symbols(client: LanguageClient, game_dir):
    _open_rules(client, game_dir)
    rules, deck = (game_dir / "crazy_eights.rules").as_uri(), (game_dir / "deck.yaml").as_uri()
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="turn_st"))
    assert {s.name for s in found} == {"turn_starter"}          # in the game, and in the tutorial's steps
    assert [s.kind for s in found if s.location.uri == rules] == [types.SymbolKind.Method]
    assert len({s.location.uri for s in found}) > 1
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="clubs_kin"))
    assert ("clubs_king", deck) in [(s.name, s.location.uri) for s in found]
    assert {s.name for s in found} == {"clubs_king"}


def _decoded(data: list[int], text: str, legend) -> dict:
    """(word, token type, modifiers) of each encoded semantic token, keyed by position."""
    lines, out, line, col = text.split("\n"), {}, 0, 0
    for i in range(0, len(data), 5):
        delta_line, delta_col, length, kind, mods = data[i:i + 5]
        line += delta_line
        col = col + delta_col if delta_line == 0 else delta_col
        names = {m for b, m in enumerate(legend.token_modifiers) if mods & (1 << b)}
        out[(line, col)] = (lines[line][col:col + length], legend.token_types[kind], names)
    return out


@shared_server
async def test_semantic_tokens_follow_the_checker(client: LanguageClient, game_dir):
    text, uri = _open_rules(client, game_dir)
    full = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(
        types.TextDocumentIdentifier(uri)))
    tokens = _decoded(full.data, text, LEGEND)

    def token(needle, offset=0):
        at = _at(text, needle, offset)
        return tokens[(at.line, at.character)]
    assert token("shuffle(stock)") == ("shuffle", "function", {"defaultLibrary"})
    assert token("shuffle(stock)", len("shuffle(")) == ("stock", "namespace", set())
    assert token("zone stock", 5) == ("stock", "namespace", {"declaration"})
    assert token("zone stock") == ("zone", "keyword", set())
    assert token("c.suit == follow", 2) == ("suit", "property", set())
    assert token("c.suit == follow", len("c.suit == ")) == ("follow", "variable", set())
    assert token("func matches(c: card)", len("func matches(")) == ("c", "parameter", {"declaration"})
    assert token("turn_starter()\n}") == ("turn_starter", "method", set())
    ranged = await client.text_document_semantic_tokens_range_async(types.SemanticTokensRangeParams(
        types.TextDocumentIdentifier(uri), types.Range(_at(text, "zone stock"), _at(text, "zone discard"))))
    first = _at(text, "zone stock").line
    words = [w for w, _, _ in _decoded([ranged.data[0] - first, *ranged.data[1:]], text.split("\n", first)[-1],
                                       LEGEND).values()]
    assert words[:2] == ["zone", "stock"] and "discard" not in words and ranged.data[0] == first


@shared_server
async def test_a_quick_fix_replaces_the_misspelt_name(client: LanguageClient, game_dir):
    path = game_dir / "crazy_eights.rules"
    good = path.read_text(encoding="utf-8")
    bad = good.replace("move(top(stock), discard)\n", "move(top(stock), discrad)\n", 1)
    uri = _open(client, path, bad, 10)
    diags = await diagnostics_until(client, uri, lambda ds: any("discrad" in d.message for d in ds))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), diags[0].range, types.CodeActionContext(diagnostics=diags)))
    (action,) = [a for a in actions if "discrad" in a.title]
    assert action.title == "Replace `discrad` with `discard`" and action.kind == types.CodeActionKind.QuickFix
    assert _edited(bad, action.edit.changes[uri]) == good
    _change(client, uri, good, 11)
    await diagnostics_until(client, uri, lambda ds: len(ds) == 0)


@shared_server
async def test_card_ids_hover_jump_and_complete_in_yaml(client: LanguageClient, game_dir):
    path = game_dir / "scenarios" / "draw_one.scenario.yaml"
    text = path.read_text(encoding="utf-8")
    uri = _open(client, path, text)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), _at(text, "hearts_queen", 2)))
    assert "id: hearts_queen, kind: playing_card" in hover.contents.value and "deck.yaml" in hover.contents.value
    (location,) = await client.text_document_definition_async(types.DefinitionParams(
        types.TextDocumentIdentifier(uri), _at(text, "hearts_queen", 2)))
    deck = game_dir / "deck.yaml"
    assert location.uri == deck.as_uri()
    assert location.range.start == _at(deck.read_text(encoding="utf-8"), "hearts_queen")
    edited = text.replace("stock: [hearts_queen", "stock: [hearts_q", 1)
    _change(client, uri, edited, 2)
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri), _at(edited, "hearts_q", len("hearts_q"))))
    labels = {item.label for item in found.items}
    assert {"hearts_queen", "clubs_ace"} <= labels and "shuffle" not in labels
    _change(client, uri, text, 3)
    variant = game_dir / "variants" / "draw_one.yaml"
    vtext = variant.read_text(encoding="utf-8") + "options:\n  ha\n"
    vuri = _open(client, variant, vtext, 5)
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(vuri), types.Position(vtext.count("\n") - 1, 4)))
    assert [item.label for item in found.items] == ["hand_size"]
    _change(client, vuri, variant.read_text(encoding="utf-8"), 6)


@shared_server
async def test_card_id_in_the_rules_goes_to_its_entry(client: LanguageClient, game_dir):
    path = game_dir / "crazy_eights.rules"
    text = path.read_text(encoding="utf-8") + '\nfunc first_card() -> card = card("clubs_ace")\n'
    uri = _open(client, path, text, 20)
    at = _at(text, 'card("clubs_ace")', len('card("'))
    (location,) = await client.text_document_definition_async(types.DefinitionParams(
        types.TextDocumentIdentifier(uri), at))
    assert location.uri == (game_dir / "deck.yaml").as_uri()
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    assert "id: clubs_ace" in hover.contents.value
    _change(client, uri, path.read_text(encoding="utf-8"), 21)


def _renamed(index, symbol, new: str) -> dict:
    """path -> its text with every occurrence of `symbol` renamed to `new`."""
    occurrence = index.declarations(symbol)[0]
    texts = {}
    for path, spots in rename_edits(index, renamable(index, occurrence, symbol.name), new).items():
        lines = open(path, encoding="utf-8").read().split("\n")
        for line, col, end in sorted(spots, reverse=True):
            assert lines[line - 1][col - 1:end - 1] == symbol.name
            lines[line - 1] = lines[line - 1][:col - 1] + new + lines[line - 1][end - 1:]
        texts[path] = "\n".join(lines)
    return texts


def test_renames_keep_a_launch_game_and_its_scenarios_working():
    """Renaming a zone (named by the layout and scenarios), a kind (named by card entries and
    `c.kind == "knight"`), an ability (named by cards' ability fields) and a per-player
    variable (set by scenarios) leaves Giant King valid and its scenarios passing."""
    rules = os.path.join(GAMES_DIR, "giant_king.rules")
    game = find_game(rules, {})
    _, parses = run_checks(game, {}, with_variants=True)
    scenarios = scenario_files(game, read_text, [])
    index = Indexer().index(game, read_text, yaml_snippets({}, parses), scenarios)
    for symbol in (Symbol(NAME, "row"), Symbol(NAME, "knight"), Symbol(NAME, "phalanx"), Symbol(ATTR, "power")):
        texts = _renamed(index, symbol, symbol.name + "_renamed")
        assert len(texts) >= 2, symbol                  # the rules file and a YAML file at least
        with given_texts(texts):
            assert not [d for d in api.validate_path(game.game) if d.is_error], symbol
            for scenario in [p for p in scenarios if p in texts][:2]:
                assert run_scenario(scenario).passed, (symbol, scenario)
    for name in ("evaluate", "seat"):
        declared = Occurrence(Symbol(NAME if name == "evaluate" else ATTR, name), rules, 1, 1, True, "func")
        with pytest.raises(Refused, match="evaluate.*judge|built-in property"):
            renamable(GameIndex([declared]), declared, name)


def test_renames_reach_the_web_tables_widgets():
    """A variable a widget draws and an option a track's bound names (`-max_gap`) are renamed
    in the game file's `layout: widgets:` too: Mach Struggle stays valid."""
    rules = os.path.join(GAMES_DIR, "mach_struggle.rules")
    game = find_game(rules, {})
    _, parses = run_checks(game, {}, with_variants=True)
    index = Indexer().index(game, read_text, yaml_snippets({}, parses), scenario_files(game, read_text, []))
    for symbol in (Symbol(NAME, "max_gap"), Symbol(NAME, "gap"), Symbol(ATTR, "score")):
        texts = _renamed(index, symbol, symbol.name + "_renamed")
        assert game.game in texts, symbol
        assert symbol.name + "_renamed" in texts[game.game].split("widgets:")[1], symbol
        with given_texts(texts):
            assert not [d for d in api.validate_path(game.game) if d.is_error], symbol


def read_text(path: str) -> str | None:
    try:
        return open(path, encoding="utf-8").read()
    except OSError:
        return None
