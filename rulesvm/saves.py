"""Save files: a match stopped mid-game, written to disk and resumed exactly where it was
(`rulesvm run --save FILE`, `rulesvm resume FILE`), and the checksums saves and logs carry.

A save file records the game's files and options, the running game's state, the hands the
seats brought, every answer since the start (`moves`) and each bot's generator state. It may
come from anyone, so `load_saved` checks its shape and the state inside it against the game
before anything runs: a damaged file is a diagnostic (E020), a save from other game files
is E021, never a crash.

An edited save is E022: every save carries a checksum of its content (`save_checksum`), and
the state it holds must be the one its seed and moves lead to (the game is replayed from
the start and compared). `allow_edited` turns these into warnings. A game log carries the
checksum of its bytes in a last `checksum` record (`LogChecksum`, checked by
`rulesvm.tooling.replay`). A checksum is not a signature: it tells an edited or damaged
file from one rulesvm wrote, not a forger who recomputes it (docs/security.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile

from rulesvm import api
from rulesvm.dsl.diagnostics import Diagnostic, DiagnosticError, Span
from rulesvm.dsl.loader import display_path
from rulesvm.dsl.yaml_loader import read_file
from rulesvm.interpreter import Match, RulesRuntimeError

SAVE_KIND = "rulesvm-save"
EDITED_HINT = "to resume it anyway, add --allow-edited (its problems are then printed as warnings)"


# ---------------------------------------------------------------------- checksums

def canonical_json(value) -> str:
    """The text a save's checksum covers: `json.dumps(value, ensure_ascii=False, sort_keys=True)`."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def digest(data: bytes) -> str:
    """`sha256:` and the SHA-256 of `data` in hexadecimal: the form of every checksum."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def save_checksum(data: dict) -> str:
    """The checksum of a save (its JSON as read): the digest of the canonical JSON of every
    field but `checksum`."""
    body = canonical_json({k: v for k, v in data.items() if k != "checksum"})
    return digest(body.encode("utf-8", "surrogatepass"))        # (a JSON text may hold "\ud800")


class LogChecksum:
    """The running checksum of a game log as its lines are written: the digest of every byte
    before the last line, which is `{"checksum": "sha256:...", "type": "checksum"}`."""

    def __init__(self):
        self.hash = hashlib.sha256()

    def add(self, line: str) -> None:
        self.hash.update(line.encode("utf-8", "surrogatepass"))

    def record(self) -> dict:
        return {"checksum": "sha256:" + self.hash.hexdigest(), "type": "checksum"}


class MoveRecorder:
    """A sink that keeps the answers of a game since its start (what a save records as
    `moves`, as `[seat, option index]` pairs), and passes every record on to `sink`.

    Start a game with it (`api.new_game(game, n, seed, sink=MoveRecorder(my_sink))`) so
    `save_match` can write the moves; an `undo` record drops the decisions it took back.
    `moves=None`: the answers before are not known (a save resumed without them)."""

    def __init__(self, sink=None, moves: list | None = ()):
        self.sink = sink
        self.moves = None if moves is None else [list(m) for m in moves]

    def __call__(self, record: dict) -> None:
        if self.moves is not None:
            if record["type"] == "decision":
                self.moves.append([record["player"], record["choice"]])
            elif record["type"] == "undo":
                del self.moves[record["to"]:]
        if self.sink is not None:
            self.sink(record)


# ---------------------------------------------------------------------- writing

def save_match(match: Match, game: api.Game, path: str, agents: dict | None = None,
               specs: dict | None = None) -> None:
    """Write a save file: the game's files and options, the match state, the hands, the
    moves since the start and each agent's state, with the checksum of all that.

    The moves come from the match's sink when it is a `MoveRecorder` (as in every game the
    command line plays). A match past its first decision without one is saved without its
    moves, and such a save resumes only with `allow_edited` (its state cannot be checked)."""
    moves = match.sink.moves if isinstance(match.sink, MoveRecorder) else None
    data = save_data(match, game, moves, os.path.relpath(game.path, os.path.dirname(os.path.abspath(path))),
                     agents, specs)
    # A fresh temporary file beside the save (never a fixed name, which a planted link could
    # redirect), renamed over it at once: a save is whole or not there.
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_data(match: Match, game: api.Game, moves: list | None, game_path: str, agents: dict | None = None,
              specs: dict | None = None) -> dict:
    """A save's content, checksum included (what `save_match` writes; the web table's host
    downloads it). `moves`: the answers since the start (None: not known); `game_path`: the
    game file as the save names it (relative to the save's folder, or absolute)."""
    if moves is None and match.decisions_made == 0:
        moves = []
    data = {"kind": SAVE_KIND, "game_path": game_path,
            "card_sets": [os.path.abspath(p) for p in game.card_sets],
            "variants": [v if v in game.model.variants else os.path.abspath(v) for v in game.variants],
            "options": {k: list(v) if isinstance(v, tuple) else v for k, v in game.options.items()},
            "match": match.to_json(),
            "hands": {str(s + 1): list(ids) for s, ids in (getattr(match, "hands", None) or {}).items()},
            "agents": {str(s + 1): spec for s, spec in (specs or {}).items()},
            "agent_states": {str(s + 1): a.get_state() for s, a in (agents or {}).items()
                             if a.get_state() is not None}}
    if moves is not None:
        data["moves"] = [list(m) for m in moves]
    # The checksum covers the content as it will be read back (JSON turns tuples into lists
    # and numbers used as keys into text).
    data = json.loads(json.dumps(data, ensure_ascii=False))
    data["checksum"] = save_checksum(data)
    return data


# ---------------------------------------------------------------------- reading

def load_saved(path: str, sink=None, debug: bool = False, allow_edited: bool = False,
               warnings: list | None = None) -> tuple[api.Game, Match, dict]:
    """Load a save file and its game; raises DiagnosticError with what is wrong.

    A save file may come from anyone: its shape and the state inside it are checked against
    the game before anything runs (E020), so a damaged file is an error, never a crash. An
    edited one (E022: no checksum, a checksum that does not match, a state its seed and moves
    do not lead to) is an error too, unless `allow_edited`: then each problem is appended to
    `warnings` (a list, if given) as a warning. The match's sink is a `MoveRecorder` around
    `sink`, holding the save's moves.
    """
    shown = display_path(path)
    text, data = _read_save(path, shown)
    problem = _envelope_problem(data)
    if problem:
        raise DiagnosticError([Diagnostic("E020", f"the save file is damaged: {problem}", Span(shown, 1, 1))])
    checksum = _checksum_problem(data, text, shown)
    if checksum is not None:
        _edited(checksum, allow_edited, warnings)
    game_path = os.path.join(os.path.dirname(os.path.abspath(path)), data["game_path"])
    try:
        game = api.load_game(game_path, data.get("card_sets", []), data.get("variants", []), data.get("options", {}))
    except ValueError as exc:
        raise DiagnosticError([Diagnostic("E021", f"the save does not fit the game files: {exc}", Span(shown, 1, 1),
                                          "the game files changed since the save; restore them to resume")]) from None
    if data["match"].get("fingerprint") != game.program.fingerprint:
        raise DiagnosticError([Diagnostic("E021", "the saved game was made with different game files (rules, cards "
                                          "or options)", Span(shown, 1, 1),
                                          "the game files changed since the save; restore them to resume")])
    problem = _match_problem(game, data["match"])
    if problem:
        raise DiagnosticError([Diagnostic("E020", f"the save file is damaged: {problem}", Span(shown, 1, 1))])
    moves = data.get("moves")
    recorder = MoveRecorder(sink, moves)
    try:
        match = Match.from_json(game.program, data["match"], recorder, debug)
    except ValueError as exc:
        raise DiagnosticError([Diagnostic("E021", str(exc), Span(shown, 1, 1),
                                          "the game files changed since the save; restore them to resume")]) from None
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise DiagnosticError([Diagnostic("E020", f"the save file is damaged ({exc})", Span(shown, 1, 1))]) from None
    match.hands = {int(s) - 1: list(ids) for s, ids in data.get("hands", {}).items()}
    if moves is not None:
        problem = _replay_problem(game, data)
    elif data["match"]["state"]["decisions"] and checksum is None:
        problem = "it does not record its moves, so its state cannot be checked against its seed"
    else:
        problem = None
    if problem:
        _edited(Diagnostic("E022", f"the saved game was edited: {problem}", Span(shown, 1, 1), EDITED_HINT),
                allow_edited, warnings)
    return game, match, data


def _read_save(path: str, shown: str) -> tuple[str, dict]:
    """The save's text and its JSON object; E020 for anything that is not a save file."""
    raw = read_file(path, shown, limit=MAX_SAVE_BYTES)
    if len(raw) > MAX_SAVE_BYTES:
        raise DiagnosticError([Diagnostic("E020", f"not a rulesvm save file: larger than "
                                          f"{MAX_SAVE_BYTES // (1024 * 1024)} MiB", Span(shown, 1, 1))])
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_no_json_constant)
    except json.JSONDecodeError as exc:
        raise DiagnosticError([Diagnostic("E020", f"not a rulesvm save file: {exc.msg}",
                                          Span(shown, exc.lineno, exc.colno))]) from None
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else \
            "nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise DiagnosticError([Diagnostic("E020", f"not a rulesvm save file: {reason}", Span(shown, 1, 1))]) from None
    if not isinstance(data, dict) or data.get("kind") != SAVE_KIND or not isinstance(data.get("match"), dict):
        raise DiagnosticError([Diagnostic("E020", "not a rulesvm save file", Span(shown, 1, 1),
                                          "save files are written by `rulesvm run --save FILE`")])
    return text, data


def _edited(diag: Diagnostic, allow_edited: bool, warnings: list | None) -> None:
    """Raise an E022 error, or (allow_edited) record it as a warning."""
    if not allow_edited:
        raise DiagnosticError([diag])
    if warnings is not None:
        warnings.append(Diagnostic(diag.code, diag.message, diag.span, None, "warning"))


def _checksum_problem(data: dict, text: str, shown: str) -> Diagnostic | None:
    """E022 when the save has no checksum or one that does not match its content."""
    given = data.get("checksum")
    if given is None:
        return Diagnostic("E022", "the save has no checksum: it was edited, or written by a rulesvm older than "
                          "checksums", Span(shown, 1, 1), EDITED_HINT)
    if given != save_checksum(data):
        at = text.find('"checksum"')
        line = text.count("\n", 0, at) + 1 if at >= 0 else 1
        col = at - text.rfind("\n", 0, at) if at >= 0 else 1
        return Diagnostic("E022", "the save was changed after it was written: its content does not match its "
                          "checksum", Span(shown, line, col), EDITED_HINT)
    return None


def _replay_problem(game: api.Game, data: dict) -> str | None:
    """Replay the save's moves from its seed: what differs from the saved game, or None."""
    saved = data["match"]
    hands = {int(s) - 1: ids for s, ids in data.get("hands", {}).items()}
    try:
        m = api.new_game(game, saved["players"], saved["seed"], hands=hands)
        for k, (player, choice) in enumerate(data["moves"], 1):
            d = m.decision
            if m.is_over or d is None:
                return f"move {k} comes after the end of the game"
            if d.player + 1 != player:
                return f"move {k} is Player {player}'s, but Player {d.player + 1} decides there ({d.prompt})"
            if choice >= len(d.options):
                return f"move {k} is option {choice + 1}, but Player {player} has {len(d.options)} there"
            m.apply(choice)
    except ValueError as exc:           # hands that cannot be dealt
        return f"its game cannot be started again: {exc}"
    except RulesRuntimeError as exc:
        return f"its moves cannot be replayed: {exc.message}"
    return _match_difference(game, saved, json.loads(json.dumps(m.to_json(), ensure_ascii=False)))


def _match_difference(game: api.Game, saved: dict, replayed: dict) -> str | None:
    """How a saved match differs from the replayed one (the first difference), or None."""
    for key in sorted(set(saved) | set(replayed)):
        if key != "state" and canonical_json(saved.get(key)) != canonical_json(replayed.get(key)):
            return f"its `{key}` is not the one it was saved with"
    s, r = saved["state"], replayed["state"]
    prog = game.program
    for key in ("zones", "where", "faceup", "turn", "known", "rng", "gvars", "pvars", "cvars", "decisions", "frames",
                "pending", "pending_slot", "result"):
        if canonical_json(s.get(key)) == canonical_json(r.get(key)) or (key == "known" and key not in s):
            continue            # (a save from before knowledge was kept has none)
        if key in ("zones", "where", "faceup", "turn") and isinstance(s.get(key), list):
            k = next((i for i, (a, b) in enumerate(zip(s[key], r[key])) if a != b), 0)
            where = f"zone `{prog.zone_names[k]}`" if key == "zones" else f"card `{prog.card_ids[k]}`"
            return f"{where} is not as its seed and moves leave it"
        return f"its `{key}` is not the one its seed and moves lead to"
    if "known" not in s:
        r = dict(r)
        r.pop("known", None)
        replayed = dict(replayed, state=r)
    return None if canonical_json(saved) == canonical_json(replayed) else "its state differs from the replayed game"


MAX_SAVE_BYTES = 64 * 1024 * 1024
_U64 = 1 << 64


def _no_json_constant(name: str):
    raise ValueError(f"`{name}` is not a JSON value")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_path_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x.strip() and "\x00" not in x for x in v)


def _envelope_problem(data: dict) -> str | None:
    """What is wrong with a save file's outer fields (before its game is loaded), or None."""
    gp = data.get("game_path")
    if not isinstance(gp, str) or not gp.strip() or "\x00" in gp:
        return "`game_path` should be the path of the game file"
    for key in ("card_sets", "variants"):
        if key in data and not _is_path_list(data[key]):
            return f"`{key}` should be a list of file names"
    if "options" in data and not isinstance(data["options"], dict):
        return "`options` should be a mapping of option names to values"
    agents = data.get("agents", {})
    if not isinstance(agents, dict) or not all(isinstance(k, str) and k.isdigit() and isinstance(v, str)
                                               for k, v in agents.items()):
        return "`agents` should map seat numbers to agent names"
    moves = data.get("moves", [])
    if not isinstance(moves, list) or not all(
            isinstance(m, list) and len(m) == 2 and all(_is_int(x) for x in m) and m[0] >= 1 and m[1] >= 0
            for m in moves):
        return "`moves` should be a list of [seat, option] pairs"
    hands = data.get("hands", {})
    if not isinstance(hands, dict) or not all(isinstance(k, str) and k.isdigit() and _is_path_list(v)
                                              for k, v in hands.items()):
        return "`hands` should map seat numbers to lists of card ids"
    states = data.get("agent_states", {})
    if not isinstance(states, dict) or not all(
            isinstance(k, str) and k.isdigit() and isinstance(v, str) and v.isdigit() and int(v) < _U64
            for k, v in states.items()):
        return "`agent_states` should map seat numbers to generator states"
    return None


def _steps_ok(steps, options) -> bool:
    """A pending decision's `steps` (None, or prompts and one part label per step of each option)."""
    if steps is None:
        return True
    if not isinstance(steps, dict) or not isinstance(options, list):
        return False
    prompts, parts = steps.get("prompts"), steps.get("parts")
    return (isinstance(prompts, list) and prompts and all(isinstance(t, str) for t in prompts)
            and isinstance(steps.get("cards", False), bool)
            and isinstance(parts, list) and len(parts) == len(options)
            and all(isinstance(p, list) and len(p) == len(prompts) and all(isinstance(t, str) for t in p)
                    for p in parts))


def _json_value_ok(v, depth: int = 0) -> bool:
    """A value as `state_to_json` writes it: null, true/false, numbers, text, lists, {"t": [...]}."""
    if depth > 32:
        return False
    if v is None or isinstance(v, (bool, str)) or _is_int(v):
        return True
    if isinstance(v, list):
        return all(_json_value_ok(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return set(v) == {"t"} and isinstance(v["t"], list) and all(_json_value_ok(x, depth + 1) for x in v["t"])
    return False


def _typed_ok(v, t, prog, players: int) -> bool:
    """Does a saved variable value fit its declared type?"""
    if v is None:
        return True
    name = t.name
    if name == "int":
        return _is_int(v)
    if name == "bool":
        return isinstance(v, bool)
    if name == "text":
        return isinstance(v, str)
    if name == "card":
        return _is_int(v) and 0 <= v < len(prog.card_ids)
    if name == "player":
        return _is_int(v) and 0 <= v < players
    if name == "zone":
        return _is_int(v) and 0 <= v < prog.nzones
    if name == "ability":
        return isinstance(v, str) and v in prog.procs
    if name == "list":
        return isinstance(v, dict) and set(v) == {"t"} and isinstance(v["t"], list) and \
            all(_typed_ok(x, t.elem, prog, players) for x in v["t"])
    return _json_value_ok(v)


def _match_problem(game: api.Game, m: dict) -> str | None:
    """What is wrong with a saved match for this game (shapes, ranges, cards in one zone each)."""
    prog, model = game.program, game.model
    players = m.get("players")
    lo, hi, _ = model.players
    if not _is_int(players) or not lo <= players <= hi:
        return f"`players` should be {lo}" + (f" to {hi}" if hi != lo else "")
    if not _is_int(m.get("seed")):
        return "`seed` should be a whole number"
    st = m.get("state")
    if not isinstance(st, dict):
        return "the game state is missing"
    ncards, nzones = len(prog.card_ids), prog.nzones
    zones, where = st.get("zones"), st.get("where")
    if not isinstance(zones, list) or len(zones) != nzones or \
            not all(isinstance(z, list) and all(_is_int(c) for c in z) for z in zones):
        return f"`zones` should be {nzones} lists of cards"
    if not isinstance(where, list) or len(where) != ncards:
        return f"`where` should give the zone of each of the {ncards} cards"
    seen = [0] * ncards
    for z, cards in enumerate(zones):
        for c in cards:
            if not 0 <= c < ncards or where[c] != z:
                return f"card {c} is not where `where` says"
            seen[c] += 1
    if any(k != 1 for k in seen):
        return "every card must be in exactly one zone"
    faceup, turn = st.get("faceup"), st.get("turn")
    if not isinstance(faceup, list) or len(faceup) != ncards or not all(isinstance(f, bool) for f in faceup):
        return "`faceup` should be true/false for each card"
    if not isinstance(turn, list) or len(turn) != ncards or not all(t in (0, 90, 180, 270) and _is_int(t)
                                                                   for t in turn):
        return "`turn` should be 0, 90, 180 or 270 for each card"
    known = st.get("known")
    if known is not None and (not isinstance(known, list) or len(known) != ncards
                              or not all(_is_int(k) and 0 <= k < 1 << players for k in known)):
        return "`known` should give, for each card, the seats that know it (a bitmask)"
    for scope, key, width in (("global", "gvars", None), ("player", "pvars", players), ("card", "cvars", ncards)):
        decls = model.vars_of(scope)
        values = st.get(key)
        if not isinstance(values, list) or len(values) != len(decls):
            return f"`{key}` should hold the game's {len(decls)} {scope} variables"
        for var, value in zip(decls, values):
            row = [value] if width is None else value
            if width is not None and (not isinstance(row, list) or len(row) != width):
                return f"variable `{var.name}` should have {width} values"
            if not all(_typed_ok(v, var.type, prog, players) for v in row):
                return f"variable `{var.name}` holds a value that is not {var.type}"
    rng = st.get("rng")
    if not isinstance(rng, str) or not rng.isdigit() or int(rng) >= _U64:
        return "`rng` should be the generator state"
    decisions = st.get("decisions")
    if not _is_int(decisions) or decisions < 0:
        return "`decisions` should be a count"
    frames = st.get("frames")
    if not isinstance(frames, list):
        return "`frames` should be a list"
    for k, f in enumerate(frames):
        if not isinstance(f, dict) or f.get("proc") not in prog.procs:
            return f"frame {k + 1} names no rule of the game"
        proc = prog.procs[f["proc"]]
        if not _is_int(f.get("pc")) or not 0 <= f["pc"] < len(proc.spans):
            return f"frame {k + 1} is at no instruction of `{proc.name}`"
        if not isinstance(f.get("locals"), list) or not _json_value_ok(f["locals"]):
            return f"frame {k + 1} has damaged local values"
        below = frames[k - 1]["locals"] if k > 0 else []
        if not _is_int(f.get("ret")) or not -1 <= f["ret"] < len(below):
            return f"frame {k + 1} returns to no slot"
        if not _is_int(f.get("secret", 0)) or f.get("secret", 0) < 0:
            return f"frame {k + 1} is damaged"
    result, pending = st.get("result"), st.get("pending")
    if result is not None:
        if not isinstance(result, dict) or not set(result) <= {"ranking", "scores", "winner", "outcome"}:
            return "`result` is damaged"
        if not isinstance(result.get("ranking"), (list, type(None))) or \
                not isinstance(result.get("scores"), (dict, type(None))) or \
                not (result.get("winner") is None or _is_int(result.get("winner"))) or \
                not isinstance(result.get("outcome"), (str, type(None))):
            return "`result` is damaged"
    if pending is None:
        if result is None:
            return "the game is neither waiting for a decision nor over"
        return None
    if not frames:
        return "a decision is pending, but no rule is running"
    if not isinstance(pending, dict):
        return "`pending` is damaged"
    top = frames[-1]["locals"]
    slot = st.get("pending_slot")
    checks = [
        (_is_int(pending.get("player")) and 0 <= pending["player"] < players, "its player"),
        (isinstance(pending.get("prompt"), str), "its prompt"),
        (pending.get("kind") in ("choose", "choose_many"), "its kind"),
        (isinstance(pending.get("secret"), bool), "`secret`"),
        (isinstance(pending.get("help", ""), str) and isinstance(pending.get("confirm", False), bool)
         and isinstance(pending.get("value_type", "any"), str) and _is_int(pending.get("pass_index", -1)),
         "its settings"),
        (_json_value_ok(pending.get("picked")), "`picked`"),
        (isinstance(pending.get("options"), list) and pending["options"] and all(
            isinstance(o, list) and len(o) == 2 and isinstance(o[0], str) and _json_value_ok(o[1])
            for o in pending["options"]), "its options"),
        (_steps_ok(pending.get("steps"), pending.get("options")), "its steps"),
    ]
    for ok, what in checks:
        if not ok:
            return f"the pending decision is damaged ({what})"
    if pending["kind"] == "choose_many":
        if not (isinstance(slot, list) and len(slot) == 2 and all(_is_int(x) for x in slot)
                and 0 <= slot[0] < len(top) and -1 <= slot[1] < len(top)
                and isinstance(top[slot[0]], dict)):
            return "the pending decision is damaged (its slot)"
    elif not _is_int(slot) or not -1 <= slot < len(top):
        return "the pending decision is damaged (its slot)"
    return None
