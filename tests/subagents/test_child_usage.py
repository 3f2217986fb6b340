"""A child session's usage, mirrored into its parent, is not an answer to the parent's request."""

from __future__ import annotations

from vis_core.agent.conversation import CHILD_PURPOSE, ConversationBuilder
from vis_core.events import BlockFinished, IterationStarted, TurnStarted, UsageReported


def _shown_images(builder: ConversationBuilder) -> str:
    return "".join(message.text for message in builder.request_messages())


def test_a_childs_usage_keeps_the_images_a_block_showed_for_the_next_request():
    builder = ConversationBuilder()
    for event in (
        TurnStarted("s", turn_id="t", position=1, request="look"),
        IterationStarted("s", turn_id="t", iteration_id="i", index=1, code="show()"),
        BlockFinished("s", turn_id="t", iteration_id="i", images=["a1"]),
        UsageReported("s", turn_id="t", cost=0.1, purpose=CHILD_PURPOSE),
    ):
        builder.add(event)
    assert "attachment a1" in _shown_images(builder)  # still goes with the next request
    builder.add(UsageReported("s", turn_id="t", cost=0.1))  # the request that carried it
    assert "attachment a1" not in _shown_images(builder)
