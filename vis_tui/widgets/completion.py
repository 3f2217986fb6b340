"""The ``/`` completion popup over built-in and extension slash commands."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class CommandChoice:
    """A slash command as the popup lists it (name without the slash)."""

    name: str
    usage: str
    doc: str


def matches(choices: list[CommandChoice], text: str) -> list[CommandChoice]:
    """Commands whose name starts with what follows ``/`` (prefix matches first, then contains)."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    typed = text[1:].lower()
    prefix = [c for c in choices if c.name.lower().startswith(typed)]
    inside = [c for c in choices if typed and typed in c.name.lower() and c not in prefix]
    return prefix + inside


class CompletionMenu(OptionList, can_focus=False):
    """Shown above the prompt while a command name is typed; Tab completes the highlighted one."""

    DEFAULT_CSS = """
    CompletionMenu { height: auto; max-height: 10; border: round $primary; margin: 0 1; }
    """

    def show_choices(self, choices: list[CommandChoice]) -> None:
        self.clear_options()
        self.choices = choices
        for choice in choices:
            usage = choice.usage or f"/{choice.name}"
            doc = choice.doc.strip().splitlines()[0] if choice.doc.strip() else ""
            label = Content.assemble((f"{usage:<28}", "bold"), (doc, "$text-muted"))
            self.add_option(Option(label, id=choice.name))
        self.display = bool(choices)
        if choices:
            self.highlighted = 0

    @property
    def selected_choice(self) -> CommandChoice | None:
        choices: list[CommandChoice] = getattr(self, "choices", [])
        if not self.display or self.highlighted is None or not choices:
            return None
        return choices[self.highlighted]

    def move(self, step: int) -> None:
        count = self.option_count
        if count:
            self.highlighted = ((self.highlighted or 0) + step) % count

    def hide(self) -> None:
        self.display = False
