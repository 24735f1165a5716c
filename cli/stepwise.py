"""A compound decision at the terminal, one pick at a time (part of the CLI's rendering layer).

A `choose` with `steps:` (docs/language.md#compound-choices) is asked step by step: the
picks the current step allows, numbered; `back` takes the last pick back; the choice goes
to the game only when every step is picked (and, with `confirm:`, confirmed), so nothing of
a half-made secret choice leaves this prompt. Typing a whole option (e.g. `R2 A+ AT D-`)
still answers at once. The human agent (`human.py`) hands its answers here first.
"""

from __future__ import annotations

from rich.text import Text

from rulesvm.interpreter.steps import StepPicker

# `answer` took the input as a pick or a step command: ask again.
TAKEN = object()


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


class TerminalSteps:
    """The picks of one compound decision at one prompt."""

    def __init__(self, out, decision):
        self.out = out
        self.decision = decision
        self.picker = StepPicker(decision)

    def show(self) -> None:
        """Print the picks so far and what the current step offers."""
        p = self.picker
        if p.picked:
            self.out.print(Text("  so far: " + " | ".join(p.picked), style="green"))
        if p.complete:
            return
        self.out.print(Text(f"  Step {p.step + 1} of {len(p.prompts)}: {p.prompts[p.step]}", style="bold"))
        for i, label in enumerate(p.choices(), 1):
            self.out.print(f"  {i:>2}) {label}")

    def question(self, seat: int) -> str:
        p = self.picker
        back = ", back = undo a pick" if p.picked else ""
        return (f"[{seat}] step {p.step + 1} of {len(p.prompts)}: choose 1-{len(p.choices())} or type a pick"
                f"{back} (help for commands) > ")

    def answer(self, text: str):
        """An option index once the choice is complete, TAKEN for a pick or `back`, or None
        (not a step answer: the human agent's commands handle it)."""
        p = self.picker
        word = _normal(text)
        if word in ("back", "b") or (word == "undo" and p.picked):
            if p.undo():
                self.out.print("  took back a pick")
            else:
                self.out.print("  nothing to take back: no pick made yet")
            self.show()
            return TAKEN
        if word == "help":
            self.out.print("  pick the current step's options one at a time; the choice counts once every step\n"
                           "  is picked. back (or undo)  take back your last pick; a whole option answers at once")
            return None
        if word == "list":
            self.show()
            return TAKEN
        whole = [i for i, o in enumerate(self.decision.options) if _normal(o.label) == word]
        if whole and not word.isdigit():
            return whole[0]
        pick = self._pick(word)
        if pick is None:
            return None
        p.pick(pick)
        if p.complete:
            return p.index
        self.show()
        return TAKEN

    def _pick(self, word: str) -> str | None:
        """A pick of the current step: its number, its label, or a unique start of it."""
        choices = self.picker.choices()
        if word.isdigit():
            k = int(word)
            return choices[k - 1] if 1 <= k <= len(choices) else None
        labels = [_normal(c) for c in choices]
        if word in labels:
            return choices[labels.index(word)]
        starts = [c for c, lab in zip(choices, labels) if lab.startswith(word)]
        return starts[0] if len(starts) == 1 and word else None

    def declined(self) -> None:
        """The person did not confirm the complete choice: take the last pick back."""
        if self.picker.complete:
            self.picker.undo()
        self.show()

    def refusal(self, text: str) -> str:
        """Why `text` is neither a pick nor a command."""
        return (f"  `{text}` is not a pick of this step: type a number from 1 to {len(self.picker.choices())}, "
                "a pick, back, or help")
