"""A scripted block shows a PNG: the next request carries it on that block's result, and only that
request (``show_attachment`` shows an image "for the next request only")."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml
from sample_turns import conversation_of

from vis_core.agent.conversation import ConversationBuilder
from vis_core.events import BlockFinished
from vis_core.extension_host.attachments import load_shown_image
from vis_core.host import Host, HostOptions
from vis_core.model.conversation import ImagePart, ThinkingPart
from vis_core.model.turn import TurnStatus

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 16
CODE = f"""
await attach({PNG!r}, "dot.png")
await show_attachment("dot.png")
print("ok")
"""


def next_request(events: list, load_image) -> list:
    """The messages of the request that follows the block that showed the image."""
    builder = ConversationBuilder(load_image)
    for event in events:
        builder.add(event)
        if isinstance(event, BlockFinished):
            break
    return builder.request_messages()


async def test_shown_image_rides_on_the_next_request_only(workspace: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(
        yaml.safe_dump([{"thinking": "Draw a dot.", "code": CODE}, {"text": "A dot."}]),
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        ended = await session.submit("dot")
        assert ended.status is TurnStatus.COMPLETED, ended.error
        after_turn = session.conversation.request_messages()
        events = [stored.event for stored in host.store.events(session.id)]
        block = next(e for e in events if isinstance(e, BlockFinished))
        (shown,) = block.images

        def load(key: str) -> ImagePart | None:
            return load_shown_image(host.store, session.id, key)

        following = next_request(events, load)
        reopened = conversation_of(events, load)
        row = host.store.get_attachment(session.id, shown)
        assert row is not None
        Path(row.path).unlink()
        gone = next_request(events, load)
    finally:
        await host.close()

    image = ImagePart("image/png", base64.b64encode(PNG).decode("ascii"))
    assert [m.role for m in following] == ["user", "assistant", "tool"]
    assert following[1].thinking == (ThinkingPart("Draw a dot."),)
    assert following[2].images == (image,) and following[2].text == "ok"
    for messages in (after_turn, reopened):  # answered: later requests carry no image
        assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert messages[1].thinking == (ThinkingPart("Draw a dot."),)
        assert messages[2].images == () and messages[2].text == "ok"
    assert gone[2].images == ()
    assert f"attachment {shown}) is no longer stored" in gone[2].text
