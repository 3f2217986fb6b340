"""Markdown text from Vis itself in the transcript: command output, errors, ``/undo`` notes.

Apart from the transcript's module so that Textual's Markdown (markdown-it, Pygments) loads
with the first such message, not before the first frame; plain notes are ``PlainMessage``."""

from __future__ import annotations

from textual.widgets import Markdown

from vis_tui.widgets.answer import AnswerView


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
        siblings = self.parent.children if self.parent is not None else []
        index = siblings.index(self)
        before = siblings[index - 1] if index else None
        # live, an answer ending the turn had no bottom margin (``AnswerView:last-child``)
        gap = 0
        if before is not None and not isinstance(before, AnswerView):
            gap = before.styles.margin.bottom
        self.styles.margin = (gap + 1, 0, 0, 0)
