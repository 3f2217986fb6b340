"""A searchable list to choose one item from (models, providers): Enter chooses, Esc closes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from vis_tui.fuzzy import rank, split_rank
from vis_tui.keys import QUIT_KEY


@dataclass(frozen=True)
class PickItem:
    """One choice: ``id`` is what the picker returns; ``note`` is shown muted beside it."""

    id: str
    label: str
    note: str = ""


class PickerScreen(ModalScreen[str | None]):
    """Dismisses with the chosen item's id; with ``free_text``, Enter on a typed value that
    matches nothing returns the value itself (a model the list does not know). Then items
    that hold only the typed letters in order are shown as candidates, none chosen: Enter
    does not pick an unrelated item, ↑/↓ does."""

    DEFAULT_CSS = """
    PickerScreen { align: center middle; background: $background 60%; }
    PickerScreen #picker-box {
        width: 90%; max-width: 90; height: auto; max-height: 80%;
        padding: 1 2; background: $surface; border: round $primary;
    }
    PickerScreen #picker-list { height: auto; max-height: 20; margin: 1 0; }
    PickerScreen #picker-keys { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Close", show=False),
        QUIT_KEY,
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]

    def __init__(
        self,
        title: str,
        items: list[PickItem],
        *,
        placeholder: str = "Type to filter…",
        free_text: bool = False,
        highlight: str | None = None,
        keys: str = "Enter chooses · ↑/↓ move · Esc closes",
        empty: str = "Nothing to choose from.",
    ) -> None:
        """``empty``: what the list says when it has no item at all (what to do instead)."""
        super().__init__()
        self.title_text = title
        self.items = items
        self.placeholder = placeholder
        self.free_text = free_text
        self.highlight = highlight
        self.keys = keys
        self.empty = empty
        self.shown: list[PickItem] = []
        self._first = 0

    def compose(self) -> Any:
        with Vertical(id="picker-box"):
            yield Static(Content.styled(self.title_text, "bold"), id="picker-title")
            yield Input(placeholder=self.placeholder, id="picker-search")
            yield OptionList(id="picker-list")
            yield Static(Content(self.keys), id="picker-keys")

    def on_mount(self) -> None:
        self._fill("")
        if self.highlight is not None:
            ids = [item.id for item in self.shown]
            if self.highlight in ids:
                self.query_one(OptionList).highlighted = ids.index(self.highlight)
        self.query_one(Input).focus()

    def _fill(self, query: str) -> None:
        listing = self.query_one(OptionList)
        listing.clear_options()
        typed = query.strip()
        if self.free_text:
            real, loose = split_rank(typed, self.items, lambda item: item.label)
        else:
            real, loose = rank(typed, self.items, lambda item: item.label), []
        self.shown = real + loose
        self._first = 0  # the option of shown[0] (after a note)
        options: list[Option] = []  # added at once: one layout, not one per item
        if not real and loose:
            note = f"Nothing is named {typed!r}. Enter uses what you typed; ↓ picks a candidate:"
            options.append(Option(Content.styled(note, "$text-muted"), disabled=True))
            self._first = 1
        for item in self.shown:
            label = Content.assemble((item.label, "bold"), (f"  {item.note}", "$text-muted"))
            options.append(Option(label, id=item.id))
        if not real and not loose:
            hint = "Enter uses what you typed." if self.free_text and query.strip() else ""
            text = f"Nothing matches. {hint}".strip() if self.items else self.empty
            options.append(Option(Content.styled(text, "$text-muted")))
        listing.add_options(options)
        if real:
            listing.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        listing = self.query_one(OptionList)
        chosen = self._chosen(listing.highlighted)
        if chosen is not None:
            self.dismiss(chosen.id)
        elif self.free_text and event.value.strip():
            self.dismiss(event.value.strip())

    def _chosen(self, option: int | None) -> PickItem | None:
        """The item shown as option ``option`` (None for a note or no option)."""
        index = -1 if option is None else option - self._first
        return self.shown[index] if 0 <= index < len(self.shown) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chosen = self._chosen(event.option_index)
        if chosen is not None:
            self.dismiss(chosen.id)

    def action_move(self, step: int) -> None:
        listing = self.query_one(OptionList)
        if not self.shown:
            return
        current = self._chosen(listing.highlighted)
        if current is None:  # nothing chosen yet: ↓ takes the first, ↑ the last
            index = 0 if step > 0 else len(self.shown) - 1
        else:
            index = (self.shown.index(current) + step) % len(self.shown)
        listing.highlighted = index + self._first

    def action_cancel(self) -> None:
        self.dismiss(None)
