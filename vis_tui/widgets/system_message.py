"""Markdown text from Vis itself in the transcript: command output, errors, ``/undo`` notes.

Apart from the transcript's module so that Textual's Markdown (markdown-it, Pygments) loads
with the first such message, not before the first frame; plain notes are ``PlainMessage``."""

from __future__ import annotations

from textual.widgets import Markdown

from vis_tui.widgets.after_turn import after_turn_top


class SystemMessage(Markdown):
    """Text from Vis itself (command output, configuration help), not from the model."""

    DEFAULT_CSS = """
    SystemMessage {
        border-left: outer $primary; padding: 0 1; margin-bottom: 1; background: $boost;
    }
    SystemMessage.error { border-left: outer $error; }
    """


class AfterTurnNote(SystemMessage):
    """What Vis said right after a turn (``/undo``), shown again inside the resumed turn:
    one line further down than its neighbour's margin, as the turn's own margin put it live."""

    def on_mount(self) -> None:
        self.styles.margin = (after_turn_top(self), 0, 0, 0)
