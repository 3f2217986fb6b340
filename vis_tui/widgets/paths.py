"""Pressable file paths: a chip widget and click styles that ask the app to open an editor."""

from __future__ import annotations

from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static


class OpenPath(Message):
    """A person pressed a file path; the app opens it in ``$VISUAL``/``$EDITOR``."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path


def click_style(path: str) -> Style:
    """A Rich style that opens ``path`` when clicked (used inside tables and text)."""
    return Style(underline=True, meta={"@click": f"app.open_path({path!r})"})


class PathChip(Static, can_focus=True):
    """A focusable file path; Enter or a click opens it in the editor."""

    BINDINGS = [Binding("enter", "open", "Open in editor", show=False)]
    DEFAULT_CSS = """
    PathChip {
        width: auto;
        height: 1;
        color: $text-accent;
        text-style: underline;
        margin-right: 1;
    }
    PathChip:focus { background: $accent 30%; }
    """

    def __init__(self, path: str, label: str | None = None) -> None:
        super().__init__(label or path, markup=False)
        self.path = path

    def action_open(self) -> None:
        self.post_message(OpenPath(self.path))

    def on_click(self) -> None:
        self.post_message(OpenPath(self.path))
