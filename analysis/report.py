"""Simulation output files: the PNG plot, the self-contained HTML report, and comparisons.

`plot_png` draws win rates with 95% intervals (or a solo game's outcome rates), the
game-length histogram and the score distribution with matplotlib (optional dependency:
`pip install rulesvm[plot]`). `html_report` writes one page with the tables and the plot
embedded. `compare` puts a base simulation and variant simulations side by side with the
differences and their significance.
"""

from __future__ import annotations

import base64
import html
import io

from .stats import two_proportion_p, welch_p


def plot_png(summary: dict, title: str | None = None) -> bytes:
    try:
        # matplotlib is optional (`pip install rulesvm[plot]`): imported only to draw a plot.
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("plots need matplotlib: `pip install rulesvm[plot]`") from None
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    ax = axes[0]
    if summary["players"] > 1:
        seats = summary["seats"]
        rates = [s["win_rate"] or 0 for s in seats]
        errs = [[r - s["ci95"][0] for r, s in zip(rates, seats)], [s["ci95"][1] - r for r, s in zip(rates, seats)]]
        ax.bar([f"seat {s['seat']}\n{s['agent']}" for s in seats], rates, yerr=errs, capsize=4, color="#4c72b0")
        ax.axhline(1 / summary["players"], color="grey", linestyle="--", linewidth=1)
        ax.set_ylabel("win rate (95% CI)")
        ax.set_ylim(0, 1)
    else:
        rates = summary["outcome_rates"]
        ax.bar(list(rates), list(rates.values()), color="#4c72b0")
        ax.set_ylabel("share of games")
        ax.set_ylim(0, 1)
    ax.set_title("results")
    ax = axes[1]
    hist = summary["length"]["decisions_histogram"]
    if hist:
        ax.bar([v for v, _ in hist], [k for _, k in hist], width=1.0, color="#55a868")
    ax.set_xlabel("decisions per game")
    ax.set_title("game length")
    ax = axes[2]
    for s, h in enumerate(summary["score_histograms"]):
        if h:
            ax.step([v for v, _ in h], [k for _, k in h], where="mid", label=f"seat {s + 1}")
    ax.set_xlabel("final score")
    ax.set_title("scores")
    if summary["players"] > 1:
        ax.legend(fontsize=8)
    fig.suptitle(title or f"{summary['game']}: {summary['games']} games")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def _table(rows: list[list], head: list[str]) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if v is None:
        return "-"
    return str(v)


def summary_tables(summary: dict) -> list[tuple[str, list[str], list[list]]]:
    """(title, header, rows) of every table of a summary: shared by the terminal and HTML."""
    tables = []
    if summary["players"] > 1:
        tables.append(("Win rates", ["seat", "agent", "wins", "win rate", "95% CI", "mean reward"],
                       [[s["seat"], s["agent"], s["wins"], s["win_rate"], f"{s['ci95'][0]:.3f}-{s['ci95'][1]:.3f}",
                         s["mean_reward"]] for s in summary["seats"]]))
        tables.append(("Agents", ["agent", "wins", "seats played", "win rate", "95% CI", "mean reward"],
                       [[a, v["wins"], v["seats_played"], v["win_rate"], f"{v['ci95'][0]:.3f}-{v['ci95'][1]:.3f}",
                         v["mean_reward"]] for a, v in summary["agents"].items()]))
    tables.append(("Outcomes", ["outcome", "games", "share"],
                   [[k, summary["outcomes"][k], v] for k, v in summary["outcome_rates"].items()]))
    score_rows = [[s["seat"], *(s["score"].get(k) for k in ("mean", "sd", "min", "p10", "median", "p90", "max"))]
                  for s in summary["seats"] if s["score"].get("n")]
    if score_rows:
        tables.append(("Scores", ["seat", "mean", "sd", "min", "p10", "median", "p90", "max"], score_rows))
    length = summary["length"]
    tables.append(("Game length and branching", ["measure", "mean", "sd", "p10", "median", "p90"],
                   [[name, d.get("mean"), d.get("sd"), d.get("p10"), d.get("median"), d.get("p90")]
                    for name, d in (("decisions", length["decisions"]), ("turns", length["turns"]),
                                    ("options per decision", summary["branching"]),
                                    ("seconds per game", summary["time_per_game"]))]))
    if summary["design"]:
        tables.append(("Design metrics (docs/simulate.md)", ["metric", "mean", "median"],
                       [[k, v.get("mean"), v.get("median")] for k, v in summary["design"].items()]))
    cov = summary["coverage"]
    tables.append(("Rules coverage", ["rule", "times run"],
                   [[r, k] for r, k in sorted(cov["runs"].items(), key=lambda x: -x[1])] +
                   [[r, "never"] for r in cov["never_run"]]))
    cards = sorted(summary["cards"].items(), key=lambda kv: -(kv[1]["chosen"] + kv[1]["acquired"]))
    tables.append(("Cards", ["card", "chosen", "acquired", "games (card, seat)", "win rate of its seat"],
                   [[cid, c["chosen"], c["acquired"], c["games"], c["win_rate"]] for cid, c in cards]))
    return tables


def html_report(summary: dict, png: bytes | None, title: str | None = None) -> str:
    title = title or f"rulesvm simulation: {summary['game']}"
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}"
             "table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;"
             "text-align:right}th{background:#f3f3f3}td:first-child{text-align:left}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p>{summary['games']} games, seed {summary['seed']}, variants: "
             f"{html.escape(', '.join(summary['variants']) or 'none')}, options: "
             f"{html.escape(str(summary['options']))}</p>"]
    if summary["errors"]:
        parts.append(f"<p><b>{len(summary['errors'])} game(s) failed</b>; seeds: "
                     f"{', '.join(str(e['seed']) for e in summary['errors'][:20])}</p>")
    if png:
        parts.append(f"<img alt='plots' src='data:image/png;base64,{base64.b64encode(png).decode()}'>")
    for name, head, rows in summary_tables(summary):
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(_table(rows, head))
    parts.append("</body></html>")
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
