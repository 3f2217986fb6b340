"""A turn's footer says how it ended when it did not simply complete."""

from __future__ import annotations

from vis_core.agent.session import CUT_ERROR
from vis_core.model.turn import TurnStatus
from vis_tui.widgets.turn import footer_content


def test_a_cut_answer_is_told_in_the_footer() -> None:
    footer = footer_content([], TurnStatus.INCOMPLETE, CUT_ERROR)
    assert footer is not None
    assert footer.plain == f"Incomplete: {CUT_ERROR}"
    assert "output limit (max_tokens)" in footer.plain


def test_a_completed_turn_without_steps_has_no_footer() -> None:
    assert footer_content([], TurnStatus.COMPLETED, None) is None


def test_a_cancel_is_said_once() -> None:
    footer = footer_content([], TurnStatus.CANCELLED, "cancelled by the user")
    assert footer is not None and footer.plain == "Cancelled by the user."
    other = footer_content([], TurnStatus.CANCELLED, "Vis stopped before the turn ended")
    assert other is not None and other.plain == "Cancelled. Vis stopped before the turn ended"
