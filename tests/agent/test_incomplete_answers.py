"""An assistant text that is not a whole answer reaches the model with a note saying why."""

from __future__ import annotations

import pytest
from sample_turns import conversation_of

from vis_core.agent.conversation import INCOMPLETE_NOTES
from vis_core.events import AssistantMessage, TurnEnded, TurnStarted
from vis_core.model.turn import Incomplete, TurnStatus


@pytest.mark.parametrize("why", [Incomplete.CUT, Incomplete.FAILED, Incomplete.CANCELLED])
def test_the_note_follows_the_incomplete_text(why: Incomplete) -> None:
    events = [
        TurnStarted("s", turn_id="t", position=1, request="explain"),
        AssistantMessage("s", turn_id="t", text="First, the cach", incomplete=why),
        TurnEnded("s", turn_id="t", status=TurnStatus.FAILED, content="First, the cach"),
    ]
    [_, answer] = conversation_of(events)
    assert answer.text == "First, the cach" + INCOMPLETE_NOTES[why]


def test_a_whole_answer_gets_no_note() -> None:
    events = [
        TurnStarted("s", turn_id="t", position=1, request="hi"),
        AssistantMessage("s", turn_id="t", text="Hello."),
        TurnEnded("s", turn_id="t", content="Hello."),
    ]
    assert conversation_of(events)[1].text == "Hello."
