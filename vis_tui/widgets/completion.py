"""The ``/`` completion popup over built-in and extension slash commands."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.fuzzy import Matcher
from textual.widgets import OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class CommandChoice:
    """A slash command as the popup lists it (name without the slash)."""

    name: str
    usage: str
    doc: str


def matches(choices: list[CommandChoice], text: str) -> list[CommandChoice]:
    """Commands for what follows ``/``: names that start with it first (in their order), then
    fuzzy matches (its letters in order, as the command palette matches), best first."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    typed = text[1:].lower()
    prefix = [c for c in choices if c.name.lower().startswith(typed)]
    if not typed:
        return prefix
    matcher = Matcher(typed)
    scored = [(matcher.match(c.name), c) for c in choices if c not in prefix]
    fuzzy = [c for score, c in sorted(scored, key=lambda pair: -pair[0]) if score > 0]
    return prefix + fuzzy


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
