"""What was shown right after a turn (a command's note, the fold of ``/compact``), shown
again inside the resumed turn after its footer, spaced as it was live."""

from __future__ import annotations

from textual.widget import Widget

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
