"""Save files carry a checksum and the moves since the start: an edited save (a hidden card
swapped, the generator state or the seed changed, a file from before checksums) is E022 and
exit 1, unless `--allow-edited`; an untouched save resumes as before (issue 21)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rulesvm import api, saves
from rulesvm.dsl.diagnostics import DiagnosticError

from .conftest import ROOT
from .test_cli import GK, rulesvm


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> str:
    """A Giant King game saved after 30 decisions (seed 21)."""
    path = tmp_path_factory.mktemp("saves") / "g.json"
    p = rulesvm("run", GK, "--seed", "21", "--save", str(path), "--save-at", "30", "--quiet")
    assert p.returncode == 0, p.stderr
    return str(path)


def _edit(saved: str, tmp_path, change, name: str = "edited.json", recompute: bool = False) -> str:
    """A copy of the save with `change(data)` applied (and its checksum recomputed, as a forger would)."""
    data = json.loads(Path(saved).read_text(encoding="utf-8"))
    change(data)
    if recompute:
        data["checksum"] = saves.save_checksum(data)
    out = tmp_path / name
    out.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    return str(out)


def _swap_hidden_card(data: dict) -> None:
    """Swap the top card of the hidden recruit deck with a card of Player 2's hand, consistently
    (zones and `where` agree: the state is well formed)."""
    names = api.load_game(os.path.join(ROOT, GK)).program.zone_names
    st = data["match"]["state"]
    deck, hand = names.index("recruit"), names.index("hand[2]")
    a, b = st["zones"][deck][-1], st["zones"][hand][0]
    st["zones"][deck][-1], st["zones"][hand][0] = b, a
    st["where"][a], st["where"][b] = hand, deck


def _set_rng(data: dict) -> None:
    data["match"]["state"]["rng"] = str((int(data["match"]["state"]["rng"]) + 1) % 2**64)


def _set_seed(data: dict) -> None:
    data["match"]["seed"] = 22


def test_a_save_records_its_checksum_moves_and_hands(saved):
    data = json.loads(Path(saved).read_text(encoding="utf-8"))
    assert data["checksum"] == saves.save_checksum(data) and data["checksum"].startswith("sha256:")
    assert len(data["moves"]) == data["match"]["state"]["decisions"] == 30
    assert all(len(m) == 2 and 1 <= m[0] <= 4 for m in data["moves"]) and data["hands"] == {}


def test_an_untouched_save_resumes_like_the_uninterrupted_game(saved, tmp_path):
    full = json.loads(rulesvm("run", GK, "--seed", "21", "--json", "--quiet").stdout)
    p = rulesvm("resume", saved, "--json", "--quiet")
    assert p.returncode == 0 and "warning" not in p.stderr and "E022" not in p.stderr, p.stderr
    assert json.loads(p.stdout)["result"] == full["result"]
    again = tmp_path / "again.json"
    assert rulesvm("run", GK, "--seed", "21", "--save", str(again), "--save-at", "30", "--quiet").returncode == 0
    assert again.read_bytes() == Path(saved).read_bytes()          # the same game saves the same bytes


@pytest.mark.parametrize("change", [_swap_hidden_card, _set_rng, _set_seed], ids=["swap", "rng", "seed"])
def test_an_edited_save_is_refused_unless_allow_edited(saved, tmp_path, change):
    edited = _edit(saved, tmp_path, change)
    p = rulesvm("resume", edited, "--quiet")
    assert p.returncode == 1
    assert "error[E022]: the save was changed after it was written: its content does not match its checksum" \
        in p.stderr
    assert "edited.json:" in p.stderr and "add --allow-edited" in p.stderr
    assert "Resuming" not in p.stderr
    allowed = rulesvm("resume", edited, "--quiet", "--json", "--allow-edited")
    assert allowed.returncode == 0, allowed.stderr
    assert "warning[E022]: the save was changed after it was written" in allowed.stderr
    assert "warning[E022]: the saved game was edited" in allowed.stderr
    assert "resuming the edited save anyway (--allow-edited)" in allowed.stderr
    assert json.loads(allowed.stdout)["result"]["ranking"]


@pytest.mark.parametrize("change, what", [
    (_swap_hidden_card, "zone `recruit` is not as its seed and moves leave it"),
    (_set_rng, "its `rng` is not the one its seed and moves lead to"),
    (_set_seed, "move 1 is Player"),
], ids=["swap", "rng", "seed"])
def test_a_recomputed_checksum_does_not_hide_the_edit(saved, tmp_path, change, what):
    """The state must be the one the seed and the moves lead to: the game is replayed and compared."""
    edited = _edit(saved, tmp_path, change, recompute=True)
    p = rulesvm("resume", edited, "--quiet")
    assert p.returncode == 1 and "error[E022]: the saved game was edited: " in p.stderr, p.stderr
    assert what in p.stderr
    assert "checksum" not in p.stderr.split("error[E022]")[1].split("\n")[0]


def test_a_save_written_before_checksums_needs_allow_edited(saved, tmp_path):
    def legacy(data):
        for key in ("checksum", "moves", "hands"):
            del data[key]
    old = _edit(saved, tmp_path, legacy, "old.json")
    p = rulesvm("resume", old, "--quiet")
    assert p.returncode == 1
    assert "old.json:1:1: error[E022]: the save has no checksum" in p.stderr
    assert "hint: to resume it anyway, add --allow-edited" in p.stderr
    allowed = rulesvm("resume", old, "--quiet", "--allow-edited")
    assert allowed.returncode == 0 and "warning[E022]: the save has no checksum" in allowed.stderr
    assert allowed.stderr.count("warning[E022]") == 1        # not also "does not record its moves"


def test_the_api_reports_edits_as_warnings_when_allowed(saved, tmp_path):
    edited = _edit(saved, tmp_path, _set_rng)
    with pytest.raises(DiagnosticError) as exc:
        saves.load_saved(edited)
    assert [d.code for d in exc.value.diagnostics] == ["E022"]
    warnings: list = []
    _, match, _ = saves.load_saved(edited, allow_edited=True, warnings=warnings)
    assert [(d.code, d.severity) for d in warnings] == [("E022", "warning"), ("E022", "warning")]
    assert match.decisions_made == 30 and isinstance(match.sink, saves.MoveRecorder)


def test_a_save_without_its_moves_cannot_be_checked(tmp_path):
    """A game played through the API without a MoveRecorder saves no moves: its state cannot be
    checked against its seed, so resuming it needs allow_edited."""
    game = api.load_game(os.path.join(ROOT, GK))
    match = api.new_game(game, 4, 3)
    match.apply(0)
    path = str(tmp_path / "api.json")
    saves.save_match(match, game, path)
    assert "moves" not in json.loads(Path(path).read_text(encoding="utf-8"))
    with pytest.raises(DiagnosticError) as exc:
        saves.load_saved(path)
    assert "does not record its moves" in exc.value.diagnostics[0].message
    recorded = api.new_game(game, 4, 3, sink=saves.MoveRecorder())
    recorded.apply(0)
    saves.save_match(recorded, game, path)
    assert saves.load_saved(path)[1].decisions_made == 1


def test_undo_and_resaving_keep_a_save_verifiable(tmp_path):
    save = tmp_path / "h.json"
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", "--undo", "any", "--save", str(save),
                input_text="1\nundo\n2\nsave\nquit\n")
    assert p.returncode == 0 and "taking back your last decision" in p.stdout
    data = json.loads(save.read_text(encoding="utf-8"))
    assert len(data["moves"]) == data["match"]["state"]["decisions"]      # the undone decisions are gone
    resumed = rulesvm("resume", str(save), "--human", "1", input_text="1\nsave\nquit\n")
    assert resumed.returncode == 0 and "E022" not in resumed.stderr, resumed.stderr
    again = rulesvm("resume", str(save), "--quiet")
    assert again.returncode == 0 and "E022" not in again.stderr, again.stderr
    assert len(json.loads(save.read_text(encoding="utf-8"))["moves"]) > len(data["moves"])
