"""A fold in the transcript: one quiet row with the gist; opening it shows what was folded."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from vis_tui.notes import FoldInfo, fold_line


class FoldRow(Vertical, can_focus=True):
    """A fold: collapsed to one muted line; Enter or a click opens the gist in full and what
    left the model's context (read from the stored history when first opened)."""

    DEFAULT_CSS = """
    FoldRow { height: auto; padding-left: 2; color: $text-muted; }
    FoldRow:focus > .fold-header { background: $accent 20%; }
    FoldRow > .fold-body { height: auto; padding-left: 4; display: none; }
    FoldRow.-expanded > .fold-body { display: block; }
    FoldRow .fold-gist { color: $text; margin-bottom: 1; }
    """

    BINDINGS = [Binding("enter,space", "open_close", "Open/close the fold", show=False)]
    expanded: reactive[bool] = reactive(False)

    class Load(Message):
        """The row opens: its screen answers with :meth:`FoldRow.show_story`."""

        def __init__(self, row: FoldRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, fold: FoldInfo) -> None:
        super().__init__(classes="fold")
        self.fold = fold
        self.story: str | None = None

    def compose(self) -> Any:
        yield Static(Content(fold_line(self.fold)), classes="fold-header")
        with Vertical(classes="fold-body"):
            gist = self.fold.gist.strip() or "No gist: the steps simply left the context."
            yield Static(Content(gist), classes="fold-gist")
            yield Static(Content("Reading the stored history…"), classes="fold-story")

    def show_story(self, text: str) -> None:
        """What was folded, as plain text (lines kept)."""
        self.story = text
        self.query_one(".fold-story", Static).update(Content(text))

    def action_open_close(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus(scroll_visible=False)
        self.action_open_close()

    def watch_expanded(self, expanded: bool) -> None:
        if not self.is_mounted:
            return
        self.query_one(".fold-header", Static).update(
            Content(fold_line(self.fold, expanded=expanded))
        )
        self.set_class(expanded, "-expanded")
        if expanded and self.story is None:
            self.post_message(self.Load(self))
