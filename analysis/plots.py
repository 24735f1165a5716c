"""The plots of a simulation (pipeline: agents -> **statistics** -> plots), drawn with
matplotlib, an optional dependency (the `plot` extra).

Each plot is a `Panel`: what it shows, how to read it, and how to draw it from a summary
(analysis/simulate.py). A panel is drawn only where the game has what it shows: per-agent
win rates with their 95% intervals when different agents played (per-seat rates
otherwise: the first player's advantage), a solo game's outcomes, the game length and the
winner's margin binned into at most about 20 bars, and per-card win rates and acquisitions
when cards were chosen or acquired. `plot_png` draws every panel into one image (`simulate
--plot`); `panel_pngs` draws each on its own, sized to fit a page (`simulate --report`).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Callable

from .extras import install_hint
from .stats import wilson

BAR = "#4c72b0"
SECOND = "#dd8452"
FAIR = "#888888"
TOP_CARDS = 15          # cards shown in the card panels: the most used
MAX_BINS = 20           # bars of a histogram, at most about


class PlotsUnavailable(ValueError):
    """matplotlib is not installed: plots cannot be drawn (the message says how to install it)."""


@dataclass(frozen=True)
class Panel:
    key: str                            # the plot's name (the report's image id is `plot-KEY`)
    title: str
    about: str                          # what it shows and how to read it (the report's caption)
    draw: Callable                      # draw(ax, summary)
    height: float = 3.6                 # inches, in a panel of its own


def _pyplot():
    try:
        # matplotlib is optional (the `plot` extra): imported only to draw a plot.
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotsUnavailable(f"plots need matplotlib, which is not installed: {install_hint('plot')}") from None
    return plt


# ---------------------------------------------------------------------- which panels

def panels(summary: dict) -> list[Panel]:
    """The panels that have something to show for this simulation, in the report's order."""
    out = []
    if summary["players"] > 1 and len(summary["agents"]) > 1:
        out.append(Panel("agents", "Win rate by agent",
                         "Each agent's share of the games it played, with its 95% Wilson interval (the black "
                         "line). Agents rotate over the seats game by game, so seat order favours none of them. "
                         "The dashed line is a fair share (1 / players): an agent whose interval lies wholly "
                         "above it wins more than chance.", _draw_agents))
    elif summary["players"] > 1:
        out.append(Panel("seats", "Win rate by seat",
                         "Each seat's share of the games, with its 95% Wilson interval. The dashed line is a "
                         "fair share (1 / players): a seat whose interval lies wholly above it has an advantage "
                         "(the first player's, for seat 1).", _draw_seats))
    else:
        out.append(Panel("outcomes", "Outcomes",
                         "The share of games that ended in each outcome, with 95% Wilson intervals.",
                         _draw_outcomes))
    if summary["length"]["decisions_histogram"]:
        out.append(Panel("length", "Game length",
                         "How many games lasted how many decisions (forced choices are not decisions), in bins "
                         "of equal width; the dashed line is the median. A wide spread means games of very "
                         "different lengths.", _draw_length))
    if summary["players"] > 1 and summary.get("margin_histogram"):
        out.append(Panel("margin", "Winner's margin",
                         "The winner's final score minus the best score of the others, game by game. Small "
                         "margins: close games; a margin of 0 is a tie broken by the rules' ranking.",
                         _draw_margin))
    elif summary["players"] == 1 and summary["score_histograms"] and summary["score_histograms"][0]:
        out.append(Panel("scores", "Final score", "How many games ended with each final score, in bins of equal "
                         "width; the dashed line is the median.", _draw_solo_scores))
    cards = _top_cards(summary)
    # A card's win rate means something where games have winners (a solo game may only have outcomes).
    if cards and (summary["players"] > 1 or summary["seats"][0]["wins"]):
        share = "a fair share (1 / players), dashed" if summary["players"] > 1 else "the share of all games won, dashed"
        out.append(Panel("card_wins", "Win rate of the seats that took each card",
                         f"For the {TOP_CARDS} most used cards: in the games where a seat chose or acquired the "
                         f"card, how often that seat won, with its 95% Wilson interval, against {share}. A card "
                         "well above it may be too strong, or chosen by players who are winning anyway.",
                         _draw_card_wins, height=4.8))
    if cards:
        out.append(Panel("card_use", "How often each card is chosen and acquired",
                         f"For the {TOP_CARDS} most used cards: how many times per game a player chose the card "
                         "in a decision, and how many times per game it moved into a player's zone from elsewhere "
                         "(acquired). A card nobody takes may be too weak.", _draw_card_use, height=4.8))
    return out


# ---------------------------------------------------------------------- drawing

def plot_png(summary: dict, title: str | None = None) -> bytes:
    """Every panel in one image, two to a row (`simulate --plot`)."""
    plt = _pyplot()
    shown = panels(summary)
    rows = math.ceil(len(shown) / 2)
    heights = [max(p.height for p in shown[r * 2:r * 2 + 2]) for r in range(rows)]
    fig, axes = plt.subplots(rows, 2, figsize=(13, sum(heights) + 0.6), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, panel in zip(axes.flat, shown):
        panel.draw(ax, summary)
        ax.set_title(panel.title)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    fig.suptitle(title or f"{summary['game']}: {summary['games']} games")
    return _png(plt, fig)


def panel_pngs(summary: dict) -> list[tuple[Panel, bytes]]:
    """Each panel as an image of its own, 8 inches wide (`simulate --report`)."""
    plt = _pyplot()
    out = []
    for panel in panels(summary):
        fig, ax = plt.subplots(figsize=(8, panel.height))
        panel.draw(ax, summary)
        out.append((panel, _png(plt, fig)))
    return out


def _png(plt, fig) -> bytes:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def _rate_bars(ax, labels: list[str], wins: list[int], totals: list[int], fair: float | None, xlabel: str) -> None:
    """Horizontal bars of rates with 95% Wilson intervals, labelled with the rate: names never
    overlap, however long (agents with parameters, card ids)."""
    rates = [w / n if n else 0.0 for w, n in zip(wins, totals)]
    intervals = [wilson(w, n) for w, n in zip(wins, totals)]
    errors = [[r - lo for r, (lo, _) in zip(rates, intervals)], [hi - r for r, (_, hi) in zip(rates, intervals)]]
    y = list(range(len(labels)))
    ax.barh(y, rates, xerr=errors, capsize=3, color=BAR, error_kw={"elinewidth": 1})
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()                   # the first label on top
    for yi, r, (lo, hi), n in zip(y, rates, intervals, totals):
        ax.text(hi + 0.01, yi, f"{r:.3f} ({lo:.2f}-{hi:.2f}, n={n})", va="center", fontsize=7)
    if fair is not None:
        ax.axvline(fair, color=FAIR, linestyle="--", linewidth=1)
    ax.set_xlim(0, 1.3)                 # room right of 1 for the labels
    ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel(xlabel)


def _draw_agents(ax, summary: dict) -> None:
    agents = summary["agents"]
    names = sorted(agents, key=lambda a: -(agents[a]["win_rate"] or 0))
    _rate_bars(ax, names, [agents[a]["wins"] for a in names], [agents[a]["seats_played"] for a in names],
               1 / summary["players"], "win rate (95% interval)")


def _draw_seats(ax, summary: dict) -> None:
    seats = summary["seats"]
    _rate_bars(ax, [f"seat {s['seat']}" for s in seats], [s["wins"] for s in seats],
               [summary["games"]] * len(seats), 1 / summary["players"], "win rate (95% interval)")


def _draw_outcomes(ax, summary: dict) -> None:
    outcomes = summary["outcomes"]
    names = sorted(outcomes, key=lambda k: -outcomes[k])
    _rate_bars(ax, names, [outcomes[k] for k in names], [summary["games"]] * len(names), None,
               "share of games (95% interval)")


def binned(histogram: list, max_bins: int = MAX_BINS) -> tuple[list[float], list[int], float]:
    """(left edges, counts, width) of a value histogram [(value, count)...] in equal bins: whole
    numbers per bin for whole-number values, at most about `max_bins` bins."""
    values = [v for v, _ in histogram]
    lo, hi = min(values), max(values)
    whole = all(float(v).is_integer() for v in values)
    span = hi - lo + (1 if whole else 0)
    if whole:
        width = max(1, math.ceil(span / max_bins))
        bins = math.ceil(span / width)
    else:
        width, bins = (span / max_bins, max_bins) if span else (1.0, 1)
    counts = [0] * bins
    for v, k in histogram:
        counts[min(int((v - lo) // width), bins - 1)] += k
    return [lo + i * width for i in range(bins)], counts, width


def _histogram(ax, histogram: list, median, xlabel: str) -> None:
    edges, counts, width = binned(histogram)
    ax.bar(edges, counts, width=width, align="edge", color=BAR, edgecolor="white", linewidth=0.5)
    if median is not None:
        ax.axvline(median + (0.5 if width >= 1 and float(median).is_integer() else 0), color=FAIR,
                   linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("games")


def _draw_length(ax, summary: dict) -> None:
    d = summary["length"]["decisions"]
    _histogram(ax, summary["length"]["decisions_histogram"], d.get("median"),
               f"decisions per game (median {d.get('median')}, mean {d.get('mean', 0):.1f})")


def _draw_margin(ax, summary: dict) -> None:
    m = summary["margin"]
    _histogram(ax, summary["margin_histogram"], m.get("median"),
               f"winner's score - next best score (median {m.get('median')}, mean {m.get('mean', 0):.1f})")


def _draw_solo_scores(ax, summary: dict) -> None:
    score = summary["seats"][0]["score"]
    _histogram(ax, summary["score_histograms"][0], score.get("median"),
               f"final score (median {score.get('median')}, mean {score.get('mean', 0):.1f})")


def _top_cards(summary: dict) -> list[str]:
    cards = summary["cards"]
    used = [c for c in cards if cards[c]["games"]]
    return sorted(used, key=lambda c: (-cards[c]["games"], c))[:TOP_CARDS]


def _draw_card_wins(ax, summary: dict) -> None:
    cards = summary["cards"]
    names = _top_cards(summary)
    # Against a fair share, or alone against the share of all games won.
    fair = 1 / summary["players"] if summary["players"] > 1 else summary["seats"][0]["wins"] / max(summary["games"], 1)
    _rate_bars(ax, names, [cards[c]["wins"] for c in names], [cards[c]["games"] for c in names], fair,
               "win rate of the seat that took it (95% interval)")


def _draw_card_use(ax, summary: dict) -> None:
    cards = summary["cards"]
    names = _top_cards(summary)
    games = max(summary["games"], 1)
    y = list(range(len(names)))
    ax.barh([v - 0.2 for v in y], [cards[c]["chosen"] / games for c in names], height=0.4, color=BAR,
            label="chosen per game")
    ax.barh([v + 0.2 for v in y], [cards[c]["acquired"] / games for c in names], height=0.4, color=SECOND,
            label="acquired per game")
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("times per game")
    ax.legend(fontsize=8, loc="lower right")
