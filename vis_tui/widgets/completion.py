"""The completion popup above the prompt: slash commands, ``/model`` names, ``@`` paths."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from vis_tui.fuzzy import rank, split_rank
from vis_tui.widgets.hanging import HangingLine, StackedLines

USAGE_WIDTH = 28  # the usage column; a longer usage has a line of its own
DESCRIPTION_COLUMN = USAGE_WIDTH + 2  # two spaces past the usage column


@dataclass(frozen=True)
class CommandChoice:
    """A slash command as the popup lists it (name without the slash)."""

    name: str
    usage: str
    doc: str


@dataclass(frozen=True)
class Completion:
    """One row of the popup: Tab puts ``text`` in place of the cursor's line from column
    ``start`` up to the cursor."""

    label: str
    doc: str
    text: str
    start: int
    loose: bool = False  # it holds only the typed letters in order: shown, not preselected


def matches(choices: list[CommandChoice], text: str) -> list[CommandChoice]:
    """Commands for what follows ``/``: names that start with it first (in their order), then
    fuzzy matches (its letters in order, as the command palette matches), best first."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    return rank(text[1:], choices, lambda choice: choice.name)


def command_completions(choices: list[CommandChoice], text: str) -> list[Completion]:
    return [
        Completion(c.usage or f"/{c.name}", c.doc, f"/{c.name} ", 0) for c in matches(choices, text)
    ]


MODEL_PREFIX = "/model "


def model_completions(model_ids: list[str], text: str) -> list[Completion]:
    """Model names for ``/model NAME``: those holding what was typed first, then loose
    candidates (its letters in order), which Tab does not take until ↑/↓ chooses one."""
    if not text.startswith(MODEL_PREFIX) or "\n" in text:
        return []
    typed = text[len(MODEL_PREFIX) :]
    if " " in typed:
        return []
    real, loose = split_rank(typed, model_ids, lambda model_id: model_id)
    if real == [typed]:  # already complete
        return []
    start = len(MODEL_PREFIX)
    return [
        *(Completion(model_id, "", model_id, start) for model_id in real),
        *(Completion(model_id, "", model_id, start, loose=True) for model_id in loose),
    ][:50]


def choice_row(choice: Completion) -> Content | HangingLine | StackedLines:
    """A row of the popup: the usage in bold, then the description's first line from
    :data:`DESCRIPTION_COLUMN`, wrapped under that column (after a usage longer than its
    column, on the next line)."""
    usage = Content.styled(choice.label, "bold")
    doc = choice.doc.strip().splitlines()[0] if choice.doc.strip() else ""
    if not doc:
        return usage
    text = Content.styled(doc, "$text-muted")
    if usage.cell_length <= USAGE_WIDTH:
        return HangingLine(usage + " " * (DESCRIPTION_COLUMN - usage.cell_length), text)
    return StackedLines(usage, HangingLine(Content(" " * DESCRIPTION_COLUMN), text))


class CompletionMenu(OptionList, can_focus=False):
    """Shown above the prompt while something completable is typed; Tab takes the
    highlighted row."""

    DEFAULT_CSS = """
    CompletionMenu { height: auto; max-height: 10; border: round $primary; margin: 0 1; }
    """

    source = ""  # the prompt text the choices were made for

    choices: list[Completion] = []  # what the rows offer, in their order

    def show_choices(self, choices: list[Completion], source: str = "") -> None:
        """Offer ``choices``; with none offered before or now (each key of plain prose) the
        menu is left alone: clearing it laid the screen out again, a long transcript too."""
        self.source = source
        if not choices and not self.choices:
            return
        self.choices = choices
        self.clear_options()
        self.add_options(Option(choice_row(choice)) for choice in choices)  # one layout
        self.display = bool(choices)
        if choices and not choices[0].loose:
            self.highlighted = 0

    @property
    def selected_choice(self) -> Completion | None:
        if not self.display or self.highlighted is None or not self.choices:
            return None
        return self.choices[self.highlighted]

    def move(self, step: int) -> None:
        count = self.option_count
        if count and self.highlighted is None:  # loose candidates only: ↓ takes the first
            self.highlighted = 0 if step > 0 else count - 1
        elif count:
            self.highlighted = ((self.highlighted or 0) + step) % count

    def hide(self) -> None:
        self.display = False
