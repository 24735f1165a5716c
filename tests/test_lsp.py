"""The language server end to end (`rulesvm lsp`, lsp/): a client talks to it over stdio
(pytest-lsp) about a copy of the tutorial game, as an editor would."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from rulesvm import api
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.dsl.diagnostics import Span
from rulesvm.dsl.parser import parse_rules
from rulesvm.dsl.reading import given_texts, read_bytes
from rulesvm.dsl.remembered import remembered_parses
from rulesvm.lsp.diagnostics import code_link
from rulesvm.lsp.hover import hover_text, primitive_hover
from rulesvm.lsp.positions import to_range, use_encoding, word_at
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
