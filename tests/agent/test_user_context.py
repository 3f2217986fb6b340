"""What the person adds (``@path``, ``!command``, ``/undo``) joins the request the model reads."""

from __future__ import annotations

from sample_turns import conversation_of

from vis_core.events import TurnEnded, TurnStarted, UserContext, event_from_dict
from vis_core.model.turn import ContextOrigin


def test_context_joins_its_turns_request_or_waits_for_the_next_one() -> None:
    events = [
        TurnStarted("s", turn_id="t1", position=1, request="!ls"),
        UserContext("s", turn_id="t1", origin=ContextOrigin.SHELL, title="ls", text="a.py"),
        TurnEnded("s", turn_id="t1"),
        UserContext("s", origin=ContextOrigin.UNDO, text="[restored a.py]"),
        TurnStarted("s", turn_id="t2", position=2, request="and now?"),
    ]
    messages = conversation_of(events)
    assert [m.text for m in messages] == ["!ls\n\na.py", "[restored a.py]\n\nand now?"]


def test_user_context_round_trips_through_the_event_log() -> None:
    event = UserContext("s", turn_id="t", origin=ContextOrigin.FILE, title="a.py", text="1: x")
    again = event_from_dict(event.to_dict())
    assert again == event and again.origin is ContextOrigin.FILE
