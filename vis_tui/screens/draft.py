"""The draft screen (``/draft``): the session's draft, what approval would commit, and the
person's actions on it as buttons: approve, sync, discard (asked twice), close."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from vis_core.model.draft import DraftView
from vis_tui.keys import QUIT_KEY

DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "$text-accent"))


def diff_content(diff: str) -> Content:
    """The diff as text with added lines green and removed lines red (never markup)."""
    lines: list[Content] = []
    for line in diff.splitlines():
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "")
        if not style and line.startswith("+"):
            style = "$text-success"
        elif not style and line.startswith("-"):
            style = "$text-error"
        lines.append(Content.styled(line, style) if style else Content(line))
    return Content("\n").join(lines) if lines else Content.styled("No change yet.", "$text-muted")


class DraftScreen(ModalScreen[str | None]):
    """Returns the action the person chose (``approve``, ``sync``, ``discard``) or None."""

    DEFAULT_CSS = """
    DraftScreen { align: center middle; background: $background 60%; }
    #draft-box {
        width: 90%; max-width: 120; height: 90%;
        padding: 1 2; background: $surface; border: round $primary;
    }
    #draft-note { margin-bottom: 1; color: $text-warning; }
    #draft-summary { margin-bottom: 1; color: $text-muted; }
    #draft-diff { height: 1fr; border: round $panel; }
    #draft-actions { height: auto; margin-top: 1; }
    /* as wide as their labels: at 80 columns all four fit, "Close (Esc)" was cut */
    #draft-actions Button { margin-right: 1; min-width: 0; width: auto; }
    """
    BINDINGS = [
        QUIT_KEY,
        Binding("a", "choose('approve')", "Approve"),
        Binding("s", "choose('sync')", "Sync"),
        Binding("d", "choose('discard')", "Discard"),
        Binding("escape,q", "choose('')", "Close"),
    ]
    AUTO_FOCUS = "#draft-diff"

    def __init__(self, view: DraftView) -> None:
        super().__init__()
        self.view = view
        self._discard_asked = False

    def compose(self) -> Any:
        with Vertical(id="draft-box"):
            yield Static(Content.styled(f"Draft {self.view.label}", "bold"), id="draft-title")
            if self.view.note:  # why it is shown again: what changed since it was last
                yield Static(Content(self.view.note.replace("`", "")), id="draft-note")
            yield Static(Content(self.view.summary.replace("`", "")), id="draft-summary")
            with VerticalScroll(id="draft-diff", can_focus=True):
                yield Static(diff_content(self.view.diff))
            with Horizontal(id="draft-actions"):
                yield Button("Approve (a)", id="approve", variant="success")
                yield Button("Sync (s)", id="sync")
                yield Button("Discard (d)", id="discard", variant="error")
                yield Button("Close (Esc)", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_choose(event.button.id or "")

    def action_choose(self, action: str) -> None:
        if action == "discard" and not self._discard_asked:
            self._discard_asked = True  # the draft's work would be gone: asked twice
            button = self.query_one("#discard", Button)
            button.label = "Discard? d again"  # short: the whole of it shows at 80 columns
            button.refresh(layout=True)  # a label is no layout change to Textual: its width
            button.focus()
            return
        self.dismiss(action if action in self.view.actions else None)
