"""Simulation output (analysis: statistics and their outputs): the summary's tables, the
self-contained HTML report, and comparisons of variants.

`summary_tables` gives every table of a summary (shared by the terminal, the CSV file and
the report). `html_report` writes one page that needs nothing from the network: the plots
(analysis/plots.py) as embedded images that fit the page, each with what it shows and how
to read it, then every table, sortable by a click on a column's header (a few lines of
inline JavaScript), each design metric with its definition beside it. `compare` puts a
base simulation and variant simulations side by side with the differences and their
significance.
"""

from __future__ import annotations

import base64
import html

from .stats import two_proportion_p, welch_p, wilson


# What each table shows and how to read it: the report prints it under the table's title.
TABLE_NOTES = {
    "Win rates": "Each seat's wins over all games, with the 95% Wilson interval of its win rate, and its mean "
                 "reward (1 for a win, shared in a tie, 0 for a loss). When different agents rotate over the "
                 "seats, a seat's rate shows the seat's advantage, not an agent's strength: see Agents.",
    "Agents": "Each agent's wins over the seats it played (one per game and seat), with the 95% Wilson interval "
              "of its win rate: two agents differ when their intervals do not overlap.",
    "Outcomes": "How the games ended: a winner, a draw, or (in a solo game) the outcome the rules name.",
    "Scores": "Each seat's final score: mean, standard deviation and quantiles (p10: a tenth of the games scored "
              "less; p90: a tenth scored more).",
    "Game length and branching": "Decisions per game (forced choices are not decisions), turns (runs of "
                                 "decisions by the same player), legal options per decision, the winner's "
                                 "margin (the winner's score minus the best of the others) and the time a game "
                                 "took to simulate.",
    "Design metrics (docs/simulate.md)": "Read from the players' `evaluate` values after every round of turns "
                                         "(see --standings), game by game, then averaged; each metric's "
                                         "definition is beside it.",
    "Rules coverage": "How many times each phase, procedure, ability and trigger ran over all games; `never` "
                      "marks a rule no game reached (a dead rule, or one the bots never choose).",
    "Cards": "Per card: how many times a player chose it in a decision, how many times it moved into a player's "
             "zone from elsewhere (acquired), in how many (game, seat) pairs a seat did either, and how often "
             "that seat won, with the 95% Wilson interval.",
}

# The design metrics, defined as docs/simulate.md defines them.
METRIC_NOTES = {
    "lead_changes": "The share of consecutive standings after which a different single player leads. Higher: a "
                    "more contested game.",
    "drama": "Over the standings where the eventual winner was not leading, the mean gap between the leader and "
             "the winner, divided by the range of all evaluations in the game. Higher: winners come back from "
             "further behind.",
    "decisiveness": "1 minus the fraction of the game played before the winner took the lead for good. Higher: "
                    "the game is decided early (less suspense near the end).",
    "stability": "1 minus the mean change of the players' evaluations between consecutive standings, divided by "
                 "their range. Higher: positions change slowly.",
}

STYLE = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}
img{max-width:100%;height:auto;display:block}
figure{margin:1em 0 2em}figcaption,p.about{color:#444;max-width:60em}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3;cursor:pointer;user-select:none}th[data-sort=asc]::after{content:" \\25B2"}
th[data-sort=desc]::after{content:" \\25BC"}td:first-child{text-align:left}td.about{text-align:left;max-width:40em}
.warning{background:#fff4e5;border-left:4px solid #e67e22;padding:0.5em 1em}"""

# Sorts a table by the clicked column: numbers as numbers (an interval by its lower end), then
# text; a second click reverses. Inline: the report needs nothing from the network.
SORT_SCRIPT = """document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.title = "sort by this column";
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], col = th.cellIndex;
    var asc = th.getAttribute("data-sort") !== "asc";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-sort"); });
    th.setAttribute("data-sort", asc ? "asc" : "desc");
    function key(row) {
      var text = row.cells[col].textContent.trim(), n = parseFloat(text);
      return /^[-+]?[0-9.]/.test(text) && !isNaN(n) ? n : text.toLowerCase();
    }
    Array.from(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      if (typeof x !== typeof y) return typeof x === "number" ? -1 : 1;
      return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
    }).forEach(function (row) { body.appendChild(row); });
  });
});"""


def _table(rows: list[list], head: list[str], text_column: int | None = None) -> str:
    """A sortable table; `text_column` holds sentences (left-aligned, wrapped)."""
    out = ["<table class='sortable'><thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
           + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td class='about'>{html.escape(_fmt(c))}</td>" if i == text_column
                                    else f"<td>{html.escape(_fmt(c))}</td>" for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if v is None:
        return "-"
    return str(v)


def _interval(ci: list) -> str:
    return f"{ci[0]:.3f}-{ci[1]:.3f}"


def summary_tables(summary: dict) -> list[tuple[str, list[str], list[list]]]:
    """(title, header, rows) of every table of a summary: shared by the terminal, CSV and HTML."""
    tables = []
    if summary["players"] > 1:
        tables.append(("Win rates", ["seat", "agent", "wins", "win rate", "95% CI", "mean reward"],
                       [[s["seat"], s["agent"], s["wins"], s["win_rate"], _interval(s["ci95"]), s["mean_reward"]]
                        for s in summary["seats"]]))
        tables.append(("Agents", ["agent", "wins", "seats played", "win rate", "95% CI", "mean reward"],
                       [[a, v["wins"], v["seats_played"], v["win_rate"], _interval(v["ci95"]), v["mean_reward"]]
                        for a, v in sorted(summary["agents"].items(), key=lambda kv: -(kv[1]["win_rate"] or 0))]))
    tables.append(("Outcomes", ["outcome", "games", "share"],
                   [[k, summary["outcomes"][k], v] for k, v in summary["outcome_rates"].items()]))
    score_rows = [[s["seat"], *(s["score"].get(k) for k in ("mean", "sd", "min", "p10", "median", "p90", "max"))]
                  for s in summary["seats"] if s["score"].get("n")]
    if score_rows:
        tables.append(("Scores", ["seat", "mean", "sd", "min", "p10", "median", "p90", "max"], score_rows))
    length = summary["length"]
    measures = [("decisions", length["decisions"]), ("turns", length["turns"]),
                ("options per decision", summary["branching"])]
    if summary.get("margin", {}).get("n"):
        measures.append(("winner's margin", summary["margin"]))
    measures.append(("seconds per game", summary["time_per_game"]))
    tables.append(("Game length and branching", ["measure", "mean", "sd", "p10", "median", "p90"],
                   [[name, d.get("mean"), d.get("sd"), d.get("p10"), d.get("median"), d.get("p90")]
                    for name, d in measures]))
    if summary["design"]:
        tables.append(("Design metrics (docs/simulate.md)", ["metric", "mean", "median"],
                       [[k, v.get("mean"), v.get("median")] for k, v in summary["design"].items()]))
    cov = summary["coverage"]
    tables.append(("Rules coverage", ["rule", "times run"],
                   [[r, k] for r, k in sorted(cov["runs"].items(), key=lambda x: -x[1])] +
                   [[r, "never"] for r in cov["never_run"]]))
    cards = sorted(summary["cards"].items(), key=lambda kv: -(kv[1]["chosen"] + kv[1]["acquired"]))
    tables.append(("Cards", ["card", "chosen", "acquired", "games (card, seat)", "win rate of its seat", "95% CI"],
                   [[cid, c["chosen"], c["acquired"], c["games"], c["win_rate"],
                     _interval(wilson(c["wins"], c["games"])) if c["games"] else None] for cid, c in cards]))
    return tables


def _headline(summary: dict) -> str:
    """The result in one sentence: each agent's win rate (each seat's when one agent played
    them all; each outcome's share in a solo game)."""
    if summary["players"] > 1:
        if len(summary["agents"]) > 1:
            ranked = sorted(summary["agents"].items(), key=lambda kv: -(kv[1]["win_rate"] or 0))
        else:
            ranked = [(f"seat {s['seat']}", s) for s in summary["seats"]]
        parts = [f"{a} wins {_fmt(v['win_rate'])} (95% CI {_interval(v['ci95'])})" for a, v in ranked]
        return "; ".join(parts) + f", against a fair share of {1 / summary['players']:.3f}."
    return "; ".join(f"{k}: {_fmt(v)} of games" for k, v in summary["outcome_rates"].items()) + "."


def _value(v) -> str:
    """An option's value as a rules file writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def html_report(summary: dict, figures: list | None, no_plots: str | None = None, title: str | None = None) -> str:
    """The report page. `figures`: (Panel, PNG) pairs from analysis/plots.py; `no_plots`: why
    there are none (e.g. matplotlib is not installed), said at the top of the page."""
    title = title or f"rulesvm simulation: {summary['game']}"
    options = ", ".join(f"{k}={_value(v)}" for k, v in summary["options"].items()) or "none"
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<meta name='viewport' content='width=device-width'><style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p>{summary['games']} games of {summary['players']} player(s), seed {summary['seed']}; agents: "
             f"{html.escape(', '.join(summary['agents']) or ', '.join(s['agent'] for s in summary['seats']))}; "
             f"variants: {html.escape(', '.join(summary['variants']) or 'none')}; options: {html.escape(options)}.</p>",
             f"<p><b>Result:</b> {html.escape(_headline(summary))}</p>"]
    if summary.get("interrupted"):
        parts.append(f"<p class='warning'>Interrupted: {summary['games']} of {summary['requested']} games "
                     "summarised.</p>")
    if summary["errors"]:
        parts.append(f"<p class='warning'><b>{len(summary['errors'])} game(s) failed</b>; seeds: "
                     f"{', '.join(str(e['seed']) for e in summary['errors'][:20])}</p>")
    if no_plots:
        parts.append(f"<p class='warning' id='no-plots'>No plots: {html.escape(no_plots)}</p>")
    for panel, png in figures or []:
        parts.append(f"<h2>{html.escape(panel.title)}</h2>")
        parts.append(f"<figure id='plot-{panel.key}'><img alt='{html.escape(panel.title)}' "
                     f"src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                     f"<figcaption>{html.escape(panel.about)}</figcaption></figure>")
    tables = summary_tables(summary)
    if len(summary["agents"]) > 1:        # a tournament: its finding first
        tables.sort(key=lambda table: table[0] != "Agents")
    for name, head, rows in tables:
        parts.append(f"<h2>{html.escape(name)}</h2>")
        if name in TABLE_NOTES:
            parts.append(f"<p class='about'>{html.escape(TABLE_NOTES[name])}</p>")
        if name.startswith("Design metrics"):         # each metric with its definition beside it
            parts.append(_table([[*r, METRIC_NOTES.get(r[0], "")] for r in rows], [*head, "what it measures"],
                                text_column=len(head)))
        else:
            parts.append(_table(rows, head))
    parts.append(f"<script>{SORT_SCRIPT}</script></body></html>")
    return "\n".join(parts)



def compare(base: dict, others: list[dict]) -> dict:
    """Each variant's metrics beside the base game's, with differences and p-values.

    Rates use a two-proportion z-test; means use Welch's t-test. The games share seeds
    (common random numbers), which makes the differences less noisy than the tests assume,
    so the p-values are conservative.
    """
    def rate_rows(s):
        rows = {}
        for seat in s["seats"]:
            if s["players"] > 1:
                rows[f"seat {seat['seat']} win rate"] = (seat["wins"], s["games"])
        for k, v in s["outcomes"].items():
            rows[f"{k} rate"] = (v, s["games"])
        return rows

    def mean_rows(s):
        rows = {"decisions": s["length"]["decisions"], "turns": s["length"]["turns"],
                "options per decision": s["branching"]}
        for seat in s["seats"]:
            if seat["score"].get("n"):
                rows[f"seat {seat['seat']} score"] = seat["score"]
        for k, v in s["design"].items():
            rows[k] = v
        return rows

    out = {"base": {"variants": base["variants"], "games": base["games"]}, "variants": []}
    b_rates, b_means = rate_rows(base), mean_rows(base)
    for s in others:
        entry = {"variants": s["variants"], "games": s["games"], "metrics": []}
        for name, (x, n) in rate_rows(s).items():
            bx, bn = b_rates.get(name, (0, base["games"]))
            entry["metrics"].append({"metric": name, "base": round(bx / bn, 4) if bn else None,
                                     "variant": round(x / n, 4) if n else None,
                                     "difference": round(x / n - bx / bn, 4) if n and bn else None,
                                     "p_value": round(two_proportion_p(x, n, bx, bn), 4), "test": "two-proportion z"})
        for name, d in mean_rows(s).items():
            bd = b_means.get(name)
            if not bd or not d.get("n") or not bd.get("n"):
                continue
            p = welch_p(d["mean"], d["sd"] ** 2, d["n"], bd["mean"], bd["sd"] ** 2, bd["n"])
            entry["metrics"].append({"metric": f"mean {name}", "base": bd["mean"], "variant": d["mean"],
                                     "difference": round(d["mean"] - bd["mean"], 4), "p_value": round(p, 4),
                                     "test": "Welch t"})
        for m in entry["metrics"]:
            m["significant"] = m["p_value"] is not None and m["p_value"] < 0.05
        out["variants"].append(entry)
    return out
