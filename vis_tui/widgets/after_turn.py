"""What was shown right after a turn (a command's note, the fold of ``/compact``, the end of
a command left running and the files changed while it ran), shown again inside the resumed
turn after its footer, spaced as it was live."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from vis_core.model.block import FileChange
from vis_tui.widgets.answer import AnswerView
from vis_tui.widgets.fold_row import FoldRow


def after_turn_top(widget: Widget) -> int:
    """The top margin that puts ``widget`` (after a resumed turn's footer) where it was
    live: one line further down than its neighbour's margin, as the turn's own margin put
    it; right under a fold row, as the note of the command that made the fold was."""
    siblings = widget.parent.children if widget.parent is not None else []
    index = siblings.index(widget)
    before = siblings[index - 1] if index else None
    if isinstance(before, AfterTurnFold):
        return 0
    # live, an answer ending the turn had no bottom margin (``AnswerView:last-child``)
    gap = 0
    if before is not None and not isinstance(before, AnswerView):
        gap = before.styles.margin.bottom
    return gap + 1


class AfterTurnFold(FoldRow):
    """A fold made after a turn (``/compact``), shown again inside the resumed turn."""

    def on_mount(self) -> None:
        self.styles.margin = (after_turn_top(self), 0, 0, 0)


class BackgroundNote(Static):
    """A command left running ended between turns: its one quiet line, after the turns (as
    a command's note is, with a blank line under it), not inside the turn that started it."""

    DEFAULT_CSS = """
    BackgroundNote { color: $text-muted; padding-left: 2; margin-bottom: 1; }
    """

    def __init__(self, line: str) -> None:
        super().__init__(Content(line))  # the command's text, never markup


class AfterTurnBackgroundNote(BackgroundNote):
    """That line shown again inside the resumed turn that came before it."""

    def on_mount(self) -> None:
        self.styles.margin = (after_turn_top(self), 0, 0, 0)


DIFF_LINES = 40  # lines of one file's diff a note shows; the rest are counted


class BackgroundFilesNote(Static):
    """Files changed after a turn while a command it left running ran: the quiet line, each
    file as a block's row lists it, and its diff (cut at ``DIFF_LINES``): the person sees
    what changed, not only that something did."""

    DEFAULT_CSS = """
    BackgroundFilesNote { color: $text-muted; padding-left: 2; margin-bottom: 1; }
    """

    def __init__(self, line: str, files: Sequence[FileChange]) -> None:
        from vis_tui.widgets.block_row import INDENT, file_line
        from vis_tui.widgets.blocks.code import diff_content

        parts = [Content(line)]  # the commands' text, never markup
        for change in files:
            parts.append(Content(INDENT) + file_line(change))
            lines = change.diff.rstrip("\n").split("\n") if change.diff else []
            if lines:
                parts.append(diff_content("\n".join(lines[:DIFF_LINES])))
            if len(lines) > DIFF_LINES:
                more = f"{INDENT}… {len(lines) - DIFF_LINES:,} more lines of its diff"
                parts.append(Content.styled(more, "$text-muted"))
        super().__init__(Content("\n").join(parts))


class AfterTurnBackgroundFilesNote(BackgroundFilesNote):
    """That note shown again inside the resumed turn that came before it."""

    def on_mount(self) -> None:
        self.styles.margin = (after_turn_top(self), 0, 0, 0)
