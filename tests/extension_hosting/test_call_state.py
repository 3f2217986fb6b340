"""A session's call state: who waits on its turn (nested waits count), images shown once."""

from __future__ import annotations

import pytest

from vis_core.extension_host.call_state import SessionCallState


def _refused(state: SessionCallState) -> set[str]:
    """Which of the extensions the tests name a call into is refused (they wait on the turn)."""
    refused = set()
    for owner in ("loopy", "caller", "vis"):
        try:
            state.refuse_waiting(owner, "ping")
        except RuntimeError:
            refused.add(owner)
    return refused


def test_a_wait_lasts_until_the_last_nested_one_ends() -> None:
    state, other = SessionCallState(), SessionCallState()
    with state.awaiting_turn(["loopy", "vis", "loopy"]):
        with state.awaiting_turn(["loopy", "caller"]):
            assert _refused(state) == {"loopy", "caller"}
        assert _refused(state) == {"loopy"}  # "vis" never waits; a name counts once
        with pytest.raises(RuntimeError, match="'loopy' waits for this session's turn"):
            state.refuse_waiting("loopy", "ping")
        assert _refused(other) == set()  # another session's state is its own
    assert _refused(state) == set()


def test_shown_images_are_taken_once_in_order() -> None:
    state = SessionCallState()
    state.show("a1")
    state.show("a2")
    assert state.take_shown() == ["a1", "a2"]
    assert state.take_shown() == []
