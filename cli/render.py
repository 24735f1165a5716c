"""All terminal rendering of the CLI: diagnostics, log lines, boards, results, tables.

Nothing else in rulesvm prints to the terminal; commands build data through the public
API and hand it here. Output uses rich, so it degrades to plain text when piped.
"""

from __future__ import annotations

import json
import sys

from typing import TYPE_CHECKING

from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from rulesvm.dsl.diagnostics import printable, render as render_diagnostic

from .lazy import lazy

if TYPE_CHECKING:
    from rulesvm.analysis import report  # noqa: F401

report = lazy("rulesvm.analysis.report")     # a simulation's tables: `simulate` alone needs it (see lazy.py)

# The most diagnostics printed at once: a hostile file with a hundred thousand mistakes would
# take minutes to print (docs/security.md); `validate --json` lists them all.
MAX_SHOWN_DIAGNOSTICS = 1000


class _SafeConsole(Console):
    """A console that shows control characters in what it prints as `\\xNN`: a card or game
    name (or a save's path) cannot retitle the window, clear the screen or write the
    clipboard. Rich's own styling is not text and passes (control segments are rich's too)."""

    def _render_buffer(self, buffer) -> str:
        return super()._render_buffer(segment if segment.control else Segment(printable(segment.text), segment.style)
                                      for segment in buffer)


class Screen:
    """The two output streams of a command: `out` (results) and `log` (the game's story)."""

    def __init__(self, log_to_stderr: bool = False, quiet: bool = False, color: bool | None = None):
        self.out = _SafeConsole(highlight=False, soft_wrap=True, markup=False)
        self.err = _SafeConsole(stderr=True, highlight=False, soft_wrap=True, markup=False)
        self.log_console = self.err if log_to_stderr else self.out
        self.quiet = quiet

    # ------------------------------------------------------------------ diagnostics
    def diagnostics(self, diags, sources: dict | None = None, warnings: bool = True) -> None:
        sources = {} if sources is None else sources
        shown = [d for d in diags if warnings or d.is_error]
        for d in shown[:MAX_SHOWN_DIAGNOSTICS]:
            style = "bold red" if d.is_error else "yellow"
            text = render_diagnostic(d, sources)
            first, _, rest = text.partition("\n")
            self.err.print(Text(first, style=style))
            if rest:
                self.err.print(Text(rest))
        if len(shown) > MAX_SHOWN_DIAGNOSTICS:
            self.err.print(Text(f"... and {len(shown) - MAX_SHOWN_DIAGNOSTICS:,} more, not shown", style="dim"))

    def error(self, message: str, hint: str | None = None) -> None:
        self.err.print(Text(f"error: {message}", style="bold red"))
        if hint:
            self.err.print(Text(f"   = hint: {hint}"))

    def note(self, message: str) -> None:
        self.err.print(Text(message, style="dim"))

    def runtime_error(self, exc) -> None:
        self.err.print(Text(exc.describe(), style="bold red"))

    # ------------------------------------------------------------------ the game log
    def event(self, record: dict, viewer: set | None = None) -> None:
        """Print one game event if it is for everyone (or for a seat at this terminal)."""
        if self.quiet:
            return
        kind = record["type"]
        if kind == "log":
            to = record.get("to")
            if to is not None and viewer is not None and to not in viewer:
                return
            prefix = f"(to Player {to}) " if to is not None else ""
            self.log_console.print(Text(prefix + record["text"]))
        elif kind == "reveal":
            to = record.get("to")
            if to is not None and viewer is not None and not viewer & set(to):
                return
            self.log_console.print(Text(record["text"]))
        elif kind == "undo":
            self.log_console.print(Text(f"  Player {record.get('player')} takes back every decision after "
                                        f"#{record.get('to')}", style="dim"))

    def automatic(self, text: str) -> None:
        """A decision the engine took for a person here, with the reason (api.automatic_text)."""
        if not self.quiet:
            self.log_console.print(Text("  " + text, style="yellow"))

    def start(self, record: dict, changed: dict) -> None:
        """The game's first line: the game, players, seed, the variants and the options set
        away from their defaults (`changed`), so a pasted transcript says how it was played."""
        if not self.quiet:
            self.log_console.print(Text(start_line(record, changed), style="bold"))

    def step_header(self, step: int, last: int) -> None:
        """`rulesvm replay --step`: which step follows (0: the set-up)."""
        self.out.print(Text(f"-- step {step}/{last}" + (" (the set-up)" if step == 0 else "") + " --", style="dim"))

    def decision_echo(self, record: dict, viewer: set | None) -> None:
        """Verbose mode: show each decision (secret ones only to their own seat)."""
        if self.quiet:
            return
        forced = " (forced)" if record["type"] == "forced" else ""
        if record.get("secret") and (viewer is None or record["player"] not in viewer):
            self.log_console.print(Text(f"  Player {record['player']} makes a secret choice", style="dim"))
        else:
            n = f"#{record['n']} " if "n" in record else ""
            self.log_console.print(Text(f"  {n}Player {record['player']} > {record['label']}{forced}", style="dim"))

    # ------------------------------------------------------------------ results
    def result(self, result: dict, agents: dict, game_name: str) -> None:
        table = Table(title=f"{game_name}: result", show_lines=False)
        table.add_column("rank", justify="right")
        table.add_column("player")
        table.add_column("agent")
        table.add_column("score", justify="right")
        scores = result.get("scores") or {}
        ranking = result.get("ranking") or sorted(int(k) for k in scores)
        for rank, entry in enumerate(ranking, 1):
            seats = entry if isinstance(entry, list) else [entry]
            for seat in seats:
                table.add_row(str(rank), f"Player {seat}", agents.get(seat - 1, "?"),
                              str(scores.get(str(seat), "")))
        self.out.print(table)
        if result.get("winner") is not None:
            self.out.print(Text(f"Winner: Player {result['winner']}", style="bold green"))
        if result.get("outcome"):
            self.out.print(Text(f"Outcome: {result['outcome']}", style="bold"))

    def state(self, obs: dict, seat: int | None) -> None:
        """The whole state (everything revealed), or what one seat sees."""
        if seat is not None:
            self.out.print(Text(board_text(obs, seat)))
        else:
            self.out.print(Text(full_state_text(obs)))

    def simulation(self, summary: dict) -> None:
        o = self.out
        o.print(Text(f"{summary['game']}: {summary['games']} games, {summary['players']} players, seed "
                     f"{summary['seed']}" + (f", variants {', '.join(summary['variants'])}" if summary["variants"] else "")
                     + f" ({summary['wall_time']} s)", style="bold"))
        if summary.get("first_player"):
            fp = summary["first_player"]
            o.print(f"first player: wins {fp['seat1_win_rate']:.3f} against a fair share of {fp['fair_share']:.3f} "
                    f"(advantage {fp['advantage']:+.3f})")
        for name, head, rows in report.summary_tables(summary):
            if name == "Cards" and len(rows) > 15:
                rows = rows[:15]
                name += " (15 most used; --json or --report for all)"
            if name == "Rules coverage" and len(rows) > 25:
                rows = rows[:25]
            t = Table(title=name)
            for h in head:
                t.add_column(h)
            for row in rows:
                t.add_row(*[f"{c:.3f}" if isinstance(c, float) else ("-" if c is None else str(c)) for c in row])
            o.print(t)
        never = summary["coverage"]["never_run"]
        if never:
            o.print(Text(f"never run in any game: {', '.join(never)}", style="yellow"))
        for e in summary["errors"][:10]:
            self.err.print(Text(f"game {e['index']} (seed {e['seed']}) failed: {e['error']}", style="red"))

    def comparison(self, data: dict) -> None:
        for v in data["variants"]:
            # The columns are named after what was played: the base game and this variant.
            name = " + ".join(v["variants"])
            t = Table(title=f"base game vs {name} ({v['games']} games each, same seeds)", title_justify="left")
            t.add_column("metric", min_width=14)
            for h in ("base game", name, "difference", "p-value", "p < 0.05"):
                t.add_column(h, justify="right", no_wrap=True, min_width=len(h))
            for m in v["metrics"]:
                t.add_row(m["metric"], _num(m["base"]), _num(m["variant"]), _num(m["difference"], signed=True),
                          _num(m["p_value"]), "yes" if m["significant"] else "")
            self.out.print(t)

    def tuning(self, data: dict) -> None:
        o = self.out
        who = f"{data['players']} player{'s' if data['players'] > 1 else ''}, agents {','.join(data['agents'])}"
        o.print(Text(f"{data['game']}: tune {', '.join(data['params'])} for {', '.join(data['targets'])}; "
                     f"{who}, seed {data['seed']}, {data['games_total']} games", style="bold"))
        o.print(f"stopped: {data['stop_reason']}")
        for title, row in (("best", data["best"]), ("runner-up", data["runner_up"])):
            if row is None:
                continue
            values = ", ".join(f"{k}={_show(v)}" for k, v in row["values"].items())
            o.print(Text(f"{title}: {values}  loss {row['loss']:.4f} (95% CI {row['loss_ci95'][0]:.4f}-"
                         f"{row['loss_ci95'][1]:.4f}), {row['games']} games", style="bold" if title == "best" else ""))
            for name, m in row["metrics"].items():
                ci = f" (95% CI {m['ci95'][0]:.4f} to {m['ci95'][1]:.4f})" if m["ci95"] else ""
                o.print(f"    {name}: {_num(m['value'])}{ci}")
        if data["runner_up"] is not None and not data["distinguishable"]:
            o.print(Text("the best is NOT distinguishable from the runner-up at 95%: their loss intervals overlap "
                         "(more games, --max-games, would separate them if they differ)", style="yellow"))
        elif data["runner_up"] is not None:
            o.print(Text("the best is clearly better than every other candidate (95% intervals)", style="green"))
        t = Table(title=f"all candidates ({len(data['candidates'])})")
        labels = list(data["best"]["values"])
        for h in labels + data["targets"] + ["loss", "loss 95% CI", "games", "status"]:
            t.add_column(h)
        for row in data["candidates"]:
            t.add_row(*[_show(row["values"][k]) for k in labels],
                      *[_num(row["metrics"][name]["value"]) for name in data["targets"]],
                      f"{row['loss']:.4f}", f"{row['loss_ci95'][0]:.4f}-{row['loss_ci95'][1]:.4f}",
                      str(row["games"]), row["status"])
        o.print(t)
        if data.get("variant_file"):
            o.print(f"wrote {data['variant_file']}")

    def variant_diff(self, data: dict) -> None:
        o = self.out
        o.print(Text(f"{data['game']} + {', '.join(data['variants'])}", style="bold"))
        o.print(Text("Options", style="bold"))
        for opt in data["options"] or []:
            o.print(f"  {opt['name']}: {_show(opt['from'])} -> {_show(opt['to'])}")
        if not data["options"]:
            o.print("  (unchanged)")
        o.print(Text("Cards", style="bold"))
        cards = data["cards"]
        for c in cards["added"]:
            fields = ", ".join(f"{k}: {_show(v)}" for k, v in c["fields"].items())
            o.print(Text(f"  + {c['id']} ({c['kind']}) x{c['count']}: {fields}", style="green"))
        for c in cards["removed"]:
            o.print(Text(f"  - {c['id']} ({c['kind']}) x{c['count']}", style="red"))
        for c in cards["changed"]:
            changes = ", ".join(f"{k} {_show(a)} -> {_show(b)}" for k, (a, b) in c["changes"].items())
            o.print(Text(f"  ~ {c['id']}: {changes}", style="yellow"))
        if not any(cards.values()):
            o.print("  (unchanged)")
        o.print(Text("Rules", style="bold"))
        for part in data["rules"]:
            o.print(Text(f"  {part['change']} {part['kind']} `{part['part']}`", style="bold"))
            for line in part["diff"].splitlines():
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else None
                o.print(Text("    " + line, style=style or ""))
        if not data["rules"]:
            o.print("  (unchanged)")

    def scenario_line(self, path: str, result) -> None:
        if result.passed:
            self.out.print(Text.assemble(("PASS ", "bold green"), f"{path}  {result.name}"))
        else:
            self.out.print(Text.assemble(("FAIL ", "bold red"), f"{path}  {result.name}"))
            self.out.print(Text(f"     {result.message}"))

    def summary_line(self, passed: int, failed: int) -> None:
        self.out.print(f"{passed} passed, {failed} failed")

    def json(self, data) -> None:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n")
        sys.stdout.flush()

    # ------------------------------------------------------------------ editor tools
    def document(self, text: str) -> None:
        """Text meant for a file or another program (a schema, formatted rules), as it is."""
        sys.stdout.write(text)
        sys.stdout.flush()

    def path_line(self, path: str) -> None:
        self.out.print(Text(path))

    def unified_diff(self, lines) -> None:
        for line in lines:
            line = line.rstrip("\n")
            style = ("bold" if line.startswith(("--- ", "+++ ")) else "cyan" if line.startswith("@@")
                     else "green" if line.startswith("+") else "red" if line.startswith("-") else "")
            self.out.print(Text(line, style=style))

    # ------------------------------------------------------------------ info
    def info(self, info: dict) -> None:
        o = self.out
        o.print(Text(f"{info['name'].get('en', info['id'])} ({info['id']})", style="bold"))
        if info["description"].get("en"):
            o.print(info["description"]["en"])
        p = info["players"]
        o.print(f"Players: {p['min']}" + (f"-{p['max']}" if p["max"] != p["min"] else "") +
                f" (default {p['default']})")
        bots = info["bots"]
        o.print("Bots: " + ("the rules' `evaluate` judges positions" if bots["evaluate"] else "no `evaluate`") +
                (f"; MCTS playouts stop after {bots['playout']} decisions" if "playout" in bots else
                 "; MCTS playouts run to the end"))
        if info["options"]:
            # Names are what a user types (`--set NAME=VALUE`): never cut or wrapped, whatever the
            # width (80 columns when piped); descriptions wrap instead.
            t = Table(title="Options")
            t.add_column("name", no_wrap=True)
            t.add_column("type", no_wrap=True)
            for col in ("default", "allowed", "description"):
                t.add_column(col)
            for opt in info["options"]:
                allowed = (f"{opt['range'][0]}..{opt['range'][1]}" if opt["range"] else
                           ", ".join(map(str, opt["choices"])) if opt["choices"] else "")
                t.add_row(opt["name"], opt["type"], _show(opt["default"]), allowed, opt["doc"])
            o.print(t)
        if info["variants"]:
            t = Table(title="Variants")
            t.add_column("name", no_wrap=True)
            t.add_column("description")
            for v in info["variants"]:
                t.add_row(v["name"], v.get("description") or v["path"])
            o.print(t)
        t = Table(title="Zones")
        t.add_column("zone", no_wrap=True)
        for col in ("scope", "order", "who sees it"):
            t.add_column(col)
        for z in info["zones"]:
            sees = {"all": "everyone", "owner": "its owner", "none": "nobody (count only)"}[z["visible"]]
            if z["facedown_visible"] != "none":
                sees += f"; face-down cards: {z['facedown_visible']}"
            t.add_row(z["name"], "per player" if z["per_player"] else "shared",
                      "ordered" if z["ordered"] else "unordered", sees)
        o.print(t)
        t = Table(title=f"Cards ({info['cards']['total']} in {info['cards']['entries']} entries)")
        t.add_column("kind", no_wrap=True)
        t.add_column("count", justify="right")
        t.add_column("fields")
        for kind, count in info["cards"]["by_kind"].items():
            fields = ", ".join(f"{k}: {v}" for k, v in info["kinds"].get(kind, {}).items())
            t.add_row(kind, str(count), fields)
        o.print(t)


    def card(self, card: dict) -> None:
        """One card for `info --card`: name, kind and copies, printed fields, rule text, sides."""
        self.out.print(Text(card_description(card)))

    def card_list(self, cards: list) -> None:
        """Every card for `info --cards`, in card-file order."""
        for card in cards:
            copies = f" x{card['count']}" if card["count"] > 1 else ""
            self.out.print(Text(f"{card['name']}{copies} ({card['id']}, {card['kind']})", style="bold"))
            for line in _text_lines(card):
                self.out.print(Text("  " + line))


def card_description(card: dict) -> str:
    """A card's name, kind, copies, printed fields and rule text (both sides of a two-sided card)."""
    copies = f", {card['count']} copies" if card["count"] > 1 else ""
    lines = [f"{card['name']} ({card['id']}: {card['kind']}{copies})"]
    shown = {k: v for k, v in card["fields"].items() if v is not None and v != "" and v != []}
    if shown:
        lines.append("  " + ", ".join(f"{k}: {_show(v)}" for k, v in shown.items()))
    lines += ["  " + line for line in _text_lines(card)]
    return "\n".join(lines)


def _text_lines(card: dict) -> list[str]:
    sides = [s for s in card.get("sides", ()) if s["text"] and s["text"] != card["text"]]
    lines = [card["text"]] if card["text"] else []
    for s in sides:
        lines.append(f"{s['side']} ({s['name']}): {s['text']}")
    return lines or ["(no rule text)"]


def start_line(record: dict, options: dict) -> str:
    """`my_game: 4 players, seed 7; variant short; options rounds=3`."""
    variants = record.get("variants") or []
    players = record["players"]
    line = f"{record['game']}: {players} player{'' if players == 1 else 's'}, seed {record['seed']}; "
    line += (("variant " if len(variants) == 1 else "variants ") + ", ".join(variants)) if variants else "no variant"
    line += "; options " + ", ".join(f"{k}={_show(v)}" for k, v in options.items()) if options else \
        "; default options"
    return line


def _num(v, signed: bool = False) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:+.4f}" if signed else f"{v:.4f}"
    return f"{v:+d}" if signed and isinstance(v, int) else str(v)


def _show(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---------------------------------------------------------------------- the board for a seat

def board_changes(before: list, after: list) -> str:
    """What changed between two boards (lists of lines of `board_text`): each section whose
    lines changed, with its heading and only its new or changed lines."""
    def sections(lines):
        out, head = {}, ""
        for line in lines:
            if line.startswith("=="):
                head = line.split("  ")[0]
                out[head] = [line]
            else:
                out.setdefault(head, []).append(line)
        return out
    old = sections(before)
    shown = []
    for head, lines in sections(after).items():
        was = old.get(head, [])
        fresh = [line for line in lines[1:] if line not in was] if lines[0].startswith("==") else \
            [line for line in lines if line not in was]
        if lines[0].startswith("==") and lines[0] not in was:
            shown.append(lines[0])
        elif fresh and lines[0].startswith("=="):
            shown.append(head)
        shown += fresh
    return "\n".join(shown) if shown else "(the table has not changed; `board` shows it all)"


def _shown_vars(values: dict, layout: dict | None) -> dict:
    """The variables a person is shown: not those the layout hides, under the layout's labels."""
    spec = (layout or {}).get("vars") or {}
    hide, labels = set(spec.get("hide") or ()), spec.get("labels") or {}
    return {labels.get(k, k): v for k, v in values.items() if k not in hide}


def board_text(obs: dict, seat: int, layout: dict | None = None) -> str:
    """A compact text picture of what a seat sees: its zones, the others', shared zones, and
    the variables the game's layout does not hide."""
    lines = []
    zones = obs["zones"]
    shared = {k: v for k, v in zones.items() if not _is_per_player(v, obs["players"])}
    per = {k: v for k, v in zones.items() if _is_per_player(v, obs["players"])}
    lines.append(f"== Player {seat} (you) ==")
    for name, by_seat in per.items():
        view = by_seat[str(seat)]
        if _count(view) or (isinstance(view, dict) and "cards" in view):
            lines.append(f"  {name}: {zone_text(view)}")
    for name, value in _shown_vars(obs["player_vars"], layout).items():
        mine = value.get(str(seat))
        if _interesting(mine):
            lines.append(f"  {name}: {_var_text(mine)}")
    for other in range(1, obs["players"] + 1):
        if other == seat:
            continue
        parts = []
        for name, by_seat in per.items():
            view = by_seat[str(other)]
            if _count(view):
                parts.append(f"{name}: {zone_text(view)}")
        lines.append(f"== Player {other} ==  " + ("; ".join(parts) if parts else "(nothing)"))
    if shared:
        lines.append("== Table ==")
        for name, view in shared.items():
            if name == "box":
                continue
            if _count(view):
                lines.append(f"  {name}: {zone_text(view)}")
    gv = [f"{k}={_var_text(v)}" for k, v in _shown_vars(obs["vars"], layout).items() if _interesting(v)]
    if gv:
        lines.append("  " + ", ".join(gv))
    known = obs.get("known")
    if known:
        lines.append("== You know (not in sight) ==")
        for card in known:
            at = f", {_nth(card['from_top'])} from the top" if "from_top" in card else ""
            lines.append(f"  {card['name']}: in {card['zone']}{at}")
    return "\n".join(lines)


def _nth(k: int) -> str:
    """0 -> "1st" (the top card), 1 -> "2nd"..."""
    n = k + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def full_state_text(obs: dict) -> str:
    """Every zone of every player and every variable, for replays and debugging."""
    lines = []
    zones = obs["zones"]
    per = {k: v for k, v in zones.items() if _is_per_player(v, obs["players"])}
    for p in range(1, obs["players"] + 1):
        lines.append(f"== Player {p} ==")
        for name, by_seat in per.items():
            lines.append(f"  {name}: {zone_text(by_seat[str(p)])}")
        for name, value in obs["player_vars"].items():
            if _interesting(value.get(str(p))):
                lines.append(f"  {name}: {_var_text(value[str(p)])}")
    lines.append("== Table ==")
    for name, view in zones.items():
        if name not in per and name != "box" and _count(view):
            lines.append(f"  {name}: {zone_text(view)}")
    gv = [f"{k}={_var_text(v)}" for k, v in obs["vars"].items() if _interesting(v)]
    if gv:
        lines.append("  " + ", ".join(gv))
    if "decision" in obs:
        d = obs["decision"]
        lines.append(f"Next: Player {d['player']}: {d['prompt']} ({', '.join(d['options'])})")
    return "\n".join(lines)


def _is_per_player(view, players: int) -> bool:
    return isinstance(view, dict) and "count" not in view and set(view) == {str(p) for p in range(1, players + 1)}


def zone_text(view) -> str:
    if isinstance(view, list):          # an indexed family: its zones by index (rows for a grid)
        if view and isinstance(view[0], list):
            return " / ".join("[" + " | ".join(zone_text(v) for v in row) + "]" for row in view)
        return " | ".join(f"{i}: {zone_text(v)}" for i, v in enumerate(view) if _count(v)) or "empty"
    if "cards" not in view:
        return f"{view['count']} card(s)"
    if not view["cards"]:
        return "empty"
    names = []
    for c in view["cards"]:
        if "name" not in c:
            names.append("[face down]")
        else:
            extra = " (face down)" if c.get("facedown") else ""
            extra += f" (turned {c['turn']})" if c.get("turn") else ""
            extra += f" (other side: {c['other_side']})" if c.get("other_side") else ""
            names.append(c["name"] + extra)
    return ", ".join(names)


def _count(view) -> int:
    if isinstance(view, list):
        return sum(_count(v) for v in view)
    return view["count"]


def _interesting(v) -> bool:
    return v not in (None, False, 0, [], "")


def _var_text(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)
