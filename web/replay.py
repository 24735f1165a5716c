"""The replay viewer's data: a logged game re-run once, its state kept after every decision.

`ReplayBook` replays a `rulesvm run --log` (or `rulesvm serve --log`) file against the
current game files, like `rulesvm replay`, and keeps a copy of the state at each step (a
state is a few lists: cheap). Step k is the game after k decisions; the page asks for any
step as any seat (what that seat saw then) or with everything revealed. If the rules no
longer accept a logged decision, the book ends there and says why.
"""

from __future__ import annotations

import secrets

from rulesvm import api
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.tooling.replay import LoggedGame

from .layout import table_layout
from .views import EVERYONE, Images, PublicLog, card_var_defaults, decision_view, observation


class ReplayBook:
    def __init__(self, log: LoggedGame, game: api.Game, image_base: str = "/card-image"):
        self.log = log
        self.game = game
        self.token = secrets.token_urlsafe(18)
        self.public = PublicLog()
        self.images = Images(game, image_base)
        self.layout = table_layout(game.model, game.options)
        for name, url in self.images.by_back.items():
            self.layout["backs"].setdefault(name, {})["image"] = url
        start = log.start
        hands = {int(s) - 1: ids for s, ids in (start.get("hands") or {}).items()}
        self.match = api.new_game(game, start["players"], start["seed"], sink=self.public.sink, hands=hands)
        self.layout["card_vars"] = card_var_defaults(self.match)
        self.players = self.match.players
        self.states = [self.match.snapshot()]
        self.log_marks = [len(self.public.entries)]
        self.chosen: list[dict] = []         # per step: the logged answer (player, label, secret)
        self.problem: str | None = None
        m = self.match
        for n, (_, rec) in enumerate(log.decisions, 1):
            d = m.decision
            if m.is_over or d is None:
                self.problem = f"decision {n}: the game is already over, but the log has more decisions"
                break
            if d.player + 1 != rec["player"]:
                self.problem = (f"decision {n}: the log has Player {rec['player']} deciding '{rec['label']}', "
                                f"but now Player {d.player + 1} decides ({d.prompt})")
                break
            if rec["label"] not in d.labels:
                self.problem = f"decision {n}: '{rec['label']}' is no longer legal; legal were: " + ", ".join(d.labels)
                break
            index = d.labels.index(rec["label"])
            entry = self.public.before_decision(m, index)
            self.chosen.append({"player": d.player + 1, "label": rec["label"], "secret": d.secret})
            try:
                m.apply(index)
            except RulesRuntimeError as exc:
                self.problem = f"decision {n}: the rules failed: {exc.describe().splitlines()[0]}"
                self.chosen.pop()
                self.public.entries.pop()
                break
            self.public.after_decision(m, entry)
            self.states.append(m.snapshot())
            self.log_marks.append(len(self.public.entries))

    @property
    def steps(self) -> int:
        """The last step (the number of decisions replayed)."""
        return len(self.states) - 1

    def info(self) -> dict:
        m = self.game.model
        start = self.log.start
        return {"type": "replay", "game": {"id": m.id, "name": self.game.name, "variants": list(m.applied_variants)},
                "players": self.players, "seed": start["seed"], "steps": self.steps, "problem": self.problem,
                "layout": self.layout, "agents": start.get("agents") or {}}

    def view(self, step: int, seat: int) -> dict:
        """Step `step` as `seat` (0-based) saw it, or with everything revealed (EVERYONE)."""
        state = self.states[step].copy()
        m = self.match.with_state(state)
        public = PublicLog()
        public.entries = self.public.entries[:self.log_marks[step]]
        nxt = None
        if step < len(self.chosen):
            c = self.chosen[step]
            if seat == EVERYONE or c["player"] == seat + 1 or not c["secret"]:
                nxt = {"player": c["player"], "label": c["label"], "secret": c["secret"]}
            else:
                nxt = {"player": c["player"], "label": None, "secret": True}
            if nxt["label"] is not None and seat != EVERYONE and c["player"] != seat + 1:
                # Whether the viewer may read this answer is judged as in the log, after it.
                entry = self.public.entries[self.log_marks[step]] if self.log_marks[step] < len(self.public.entries) \
                    else None
                if entry is not None and entry.get("kind") == "decision" and seat + 1 in entry.get("hidden_from", ()):
                    nxt["label"] = None
        decision = decision_view(m, seat)
        if decision is not None:
            decision.pop("pass_index", None)
            for o in decision.get("options", ()):
                o["chosen"] = nxt is not None and nxt["label"] == o["label"]
        return {"type": "state", "step": step, "steps": self.steps, "seat": None if seat == EVERYONE else seat + 1,
                "observation": observation(m, seat, self.images), "decision": decision, "next": nxt,
                "log": public.for_seat(seat), "over": m.is_over, "result": m.result}
