"""How long the language server takes to show diagnostics after an edit (issue 27: at most 300 ms).

Starts `rulesvm lsp` as an editor would, opens each launch game's rules file and then types
into it (never saving): alternately a mistake (a procedure moving cards to a zone that does
not exist) and the original text. The time from the `didChange` notification to the
`publishDiagnostics` that shows (or clears) the mistake is the latency a designer sees; it
includes the server's wait for the typing to stop (lsp/server.py DEBOUNCE).

    .venv/bin/python benchmarks/lsp_latency.py                 # every launch game, 10 edits each
    .venv/bin/python benchmarks/lsp_latency.py --games giant_king --edits 30
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import statistics
import sys
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = "\nproc latency_probe() {\n  move(box, no_such_zone)\n}\n"


def launch_games() -> list[str]:
    return sorted(os.path.basename(p)[:-len(".rules")] for p in glob.glob(os.path.join(ROOT, "games", "*.rules")))


async def measure(client: LanguageClient, arrived: dict, uri: str, text: str, edits: int) -> list[float]:
    version, times = 1, []
    for i in range(edits):
        bad = i % 2 == 0
        version += 1
        arrived.pop(uri, None)
        start = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text + PROBE if bad else text)]))
        while True:
            diags = arrived.get(uri)
            if diags is not None and any("no_such_zone" in d.message for d in diags) == bad:
                times.append(time.perf_counter() - start)
                break
            await asyncio.sleep(0.001)
    return times


async def main(games: list[str], edits: int) -> None:
    client = LanguageClient("latency", "1")
    arrived: dict = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams):
        arrived[params.uri] = params.diagnostics

    await client.start_io(sys.executable, "-m", "rulesvm.cli.main", "lsp")
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    print(f"{'game':<18} {'median ms':>9} {'p90 ms':>7} {'max ms':>7}  ({edits} edits, nothing saved)")
    for game in games:
        path = os.path.join(ROOT, "games", f"{game}.rules")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        uri = from_fs_path(path)
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="rulesvm", version=1, text=text)))
        while uri not in arrived:           # the first check: the game and each of its variants
            await asyncio.sleep(0.01)
        times = sorted(await measure(client, arrived, uri, text, edits))
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        print(f"{game:<18} {statistics.median(times) * 1000:>9.0f} {p90 * 1000:>7.0f} {times[-1] * 1000:>7.0f}")
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=launch_games())
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.games, args.edits))
