"""What one seat's page is sent: built from `Match.observation(seat)`, never from the state.

The engine's observation already hides what a seat may not see (other hands as counts,
face-down cards as backs, variables visible to their owner only, a secret decision's
options). This module adds what a page needs around it, with the same care:

- the pending decision, with its options' labels (the CLI's labels) and, for options that
  are cards the seat can see, which card on the table each one is;
- the public log: the rules' log lines (those sent `to` one player only reach that seat),
  and the decisions: another seat's secret choice shows only that it was made, and a chosen
  card the viewer cannot see where it went shows as "a card";
- picture URLs for the faces of visible cards and for backs.

Nothing here reads the match's seed, its generator or a hidden zone's contents.
"""

from __future__ import annotations

import os

from rulesvm import api
from rulesvm.interpreter.knowledge import knows
from rulesvm.interpreter.observation import card_text_now, picked_labels

EVERYONE = -1       # the replay viewer's "everything revealed"


class Images:
    """The picture files a game names (card `image:` keys, `layout.backs.NAME.image`), served
    by number only: nothing else on disk can be reached through the server."""

    def __init__(self, game, base: str = "/card-image"):
        self.base = base                        # the URL the pictures are served under
        self.files: list[str] = []
        self.missing: list[str] = []
        self.by_card: dict[str, str] = {}      # instance id -> URL
        self.by_back: dict[str, str] = {}      # back name -> URL
        prog = game.program
        urls: dict = {}
        for card_def in prog.model.cards:
            if card_def.image:
                base = os.path.dirname(os.path.abspath(card_def.source))
                url = self._add(os.path.normpath(os.path.join(base, card_def.image)), urls)
                if url:
                    for iid in card_def.instance_ids:
                        self.by_card[iid] = url
        backs = (prog.model.layout or {}).get("backs") or {}
        for name, hint in backs.items():
            if isinstance(hint, dict) and hint.get("image"):
                url = self._add(os.path.normpath(os.path.join(os.path.dirname(game.path), hint["image"])), urls)
                if url:
                    self.by_back[name] = url

    def _add(self, path: str, urls: dict) -> str | None:
        if path in urls:
            return urls[path]
        if not os.path.isfile(path):
            if path not in self.missing:
                self.missing.append(path)
            urls[path] = None
            return None
        self.files.append(path)
        urls[path] = f"{self.base}/{len(self.files) - 1}"
        return urls[path]

    def path(self, number: int) -> str | None:
        return self.files[number] if 0 <= number < len(self.files) else None

    def decorate(self, zones: dict) -> None:
        """Add `image` to every visible card of an observation's zones (in place)."""
        if not self.by_card:
            return

        def walk(v):
            if isinstance(v, list):
                for x in v:
                    walk(x)
            elif isinstance(v, dict):
                if "count" in v:
                    for c in v.get("cards", ()):
                        url = self.by_card.get(c.get("id"))
                        if url:
                            c["image"] = url
                else:
                    for x in v.values():
                        walk(x)
        walk(zones)


class PublicLog:
    """The game's story as each seat may read it.

    `sink` takes the engine's events; `before_decision` / `after_decision` wrap each
    answered decision (the visibility of a chosen card is judged where it lies afterwards).
    """

    def __init__(self):
        self.entries: list[dict] = []

    def sink(self, record: dict) -> None:
        if record["type"] == "log":
            to = record.get("to")
            self.entries.append({"kind": "log", "text": record["text"], "to": None if to is None else [to]})
        elif record["type"] == "reveal":
            self.entries.append({"kind": "log", "text": record["text"], "to": record.get("to")})
        elif record["type"] in ("forced", "skipped"):
            # A move the engine made for a player, told to that player (and the replay viewer).
            self.entries.append({"kind": "auto", "text": api.automatic_text(record), "to": [record["player"]]})

    def note(self, text: str) -> None:
        self.entries.append({"kind": "note", "text": text, "to": None})

    def before_decision(self, match, index: int) -> dict:
        d = match.decision
        option = d.options[index]
        cards = [option.value] if d.value_type == "card" and isinstance(option.value, int) else []
        entry = {"kind": "decision", "player": d.player + 1, "label": option.label, "secret": d.secret,
                 "prompt": d.prompt, "cards": cards, "hidden_from": [], "to": None}
        self.entries.append(entry)
        return entry

    @staticmethod
    def after_decision(match, entry: dict) -> None:
        prog, st = match.program, match.state
        hidden = set()
        for c in entry.pop("cards"):
            for seat in range(match.players):
                if not knows(prog, st, c, seat):
                    hidden.add(seat + 1)
        entry["hidden_from"] = sorted(hidden)

    def truncate(self, length: int) -> None:
        del self.entries[length:]

    def for_seat(self, seat: int) -> list[dict]:
        """The entries `seat` (0-based, or EVERYONE) may read, as {kind, text, player?}."""
        viewer = seat + 1
        out = []
        for i, e in enumerate(self.entries):
            if not self._readable(e, seat):
                continue
            if e["kind"] != "decision":
                out.append({"kind": e["kind"], "text": e["text"], "private": e["to"] is not None})
                continue
            who = e["player"]
            if seat == EVERYONE or who == viewer:
                text = decision_text(e) + (" (secret)" if e["secret"] else "")
            elif e["secret"]:
                text = f"Player {who} made a secret choice"
            elif viewer in e["hidden_from"]:
                text = f"Player {who} chose a card"
            else:
                text = decision_text(e)
            if not e["secret"] and self._narrated(i, seat):
                continue
            out.append({"kind": "decision", "text": text, "player": who})
        return out

    @staticmethod
    def _readable(e: dict, seat: int) -> bool:
        return e["to"] is None or seat == EVERYONE or seat + 1 in e["to"]

    def _narrated(self, i: int, seat: int) -> bool:
        """Whether the rules' own log lines after decision `i` tell `seat` what was chosen
        ("Player 2 plays Blue 1" after choosing "Blue 1"): then the bare choice is not logged
        a second time. The lines read are those up to the next decision, after the chain of
        decisions the same player makes in a row (picks, then "done"; a card, then its target)."""
        label = self.entries[i]["label"].strip().lower()
        if len(label) < 2 or label.lstrip("-").isdigit():
            return False            # too short to be recognised in a sentence
        j = i + 1
        while j < len(self.entries) and self.entries[j]["kind"] == "decision" \
                and self.entries[j]["player"] == self.entries[i]["player"] and not self.entries[j]["secret"]:
            j += 1
        for e in self.entries[j:]:
            if e["kind"] == "decision":
                return False
            if e["kind"] == "log" and self._readable(e, seat) and label in e["text"].lower():
                return True
        return False


def decision_text(e: dict) -> str:
    """A decision as the log says it: `Player 2: Blue 1`; an answer that is only a number or a
    yes/no says what it answered (`Player 1 - How many cards to draw?: 3`)."""
    label = e["label"]
    if (label.lstrip("-").isdigit() or label.lower() in ("yes", "no", "true", "false")) and e.get("prompt"):
        return f"Player {e['player']} - {e['prompt'].rstrip(':')}: {label}"
    return f"Player {e['player']}: {label}"


def observation(match, seat: int, images: Images | None = None) -> dict:
    """The engine's observation for `seat`, without the decision parts (sent separately)."""
    obs = match.observation(seat)
    obs.pop("decision", None)
    obs.pop("waiting_for", None)
    obs.pop("result", None)
    if images is not None:
        images.decorate(obs["zones"])
        if obs.get("known"):
            images.decorate({"known": {"count": len(obs["known"]), "cards": obs["known"]}})
    return obs


def decision_view(match, seat: int) -> dict | None:
    """The pending decision as `seat` may see it: everything if it is its own (or EVERYONE),
    else who is deciding and (unless the choice is secret) the question."""
    d = match.decision
    if d is None:
        return None
    if seat != EVERYONE and d.player != seat:
        return {"player": d.player + 1, "mine": False, "secret": d.secret,
                "prompt": None if d.secret else d.prompt}
    prog, st = match.program, match.state
    look = d.player if seat == EVERYONE else seat
    d = match.decision_for(look)
    options = []
    for i, o in enumerate(d.options):
        entry = {"id": i, "label": o.label}
        if d.value_type == "card" and isinstance(o.value, int) and not isinstance(o.value, bool) \
                and 0 <= o.value < len(prog.card_ids):
            if knows(prog, st, o.value, look):
                entry["card"] = prog.card_ids[o.value]
                text = card_text_now(prog, st, o.value)
                if text:
                    entry["text"] = text
        options.append(entry)
    picked = picked_labels(prog, st, d)
    out = {"player": d.player + 1, "mine": True, "secret": d.secret, "prompt": d.prompt, "options": options,
           "help": d.help, "confirm": d.confirm, "pass_index": d.pass_index, "kind": d.kind, "picked": picked}
    if d.steps is not None:
        out["steps"] = steps_view(d)
    return out


def steps_view(d) -> dict:
    """A compound decision's steps for the page (web/static/steps.js picks them one at a time):
    each step's prompt, and each option's picks (`parts[i]` for option `i`)."""
    return {"prompts": list(d.steps.prompts), "parts": [list(p) for p in d.steps.parts]}


def card_var_defaults(match) -> dict:
    """Each per-card variable's starting value (a card at it shows no badge)."""
    prog = match.program
    out = {}
    for var, fn in zip(prog.model.vars_of("card"), prog.var_defaults["card"]):
        try:
            value = fn(match.rt, [None] * 8)
        except Exception:       # a default that needs a running game: always show the variable
            continue
        out[var.name] = list(value) if isinstance(value, tuple) else value
    return out
