"""A session's call state: who waits on its turn (nested waits count), images shown once."""

from __future__ import annotations

import pytest

from vis_core.extension_host.call_state import SessionCallState


def test_a_wait_lasts_until_the_last_nested_one_ends() -> None:
    state, other = SessionCallState(), SessionCallState()
    with state.awaiting_turn(["loopy", "vis", "loopy"]):
        with state.awaiting_turn(["loopy", "caller"]):
            assert state.awaited_by() == {"loopy", "caller"}
        assert state.awaited_by() == {"loopy"}  # "vis" never waits; a name counts once
        with pytest.raises(RuntimeError, match="'loopy' waits for this session's turn"):
            state.refuse_waiting("loopy", "ping")
        state.refuse_waiting("caller", "ping")
        assert other.awaited_by() == frozenset()  # another session's state is its own
    assert state.awaited_by() == frozenset()


def test_shown_images_are_taken_once_in_order() -> None:
    state = SessionCallState()
    state.show("a1")
    state.show("a2")
    assert state.take_shown() == ["a1", "a2"]
    assert state.take_shown() == []
