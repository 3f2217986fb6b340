"""A scripted block shows a PNG: its result message carries the image, live and when reopened."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from vis_core.agent.conversation import conversation_from_events
from vis_core.events import BlockFinished, TurnStatus
from vis_core.extension.attachments import load_shown_image
from vis_core.host import Host, HostOptions
from vis_core.providers.base import ImagePart, ThinkingPart

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 16
CODE = f"""
await attach({PNG!r}, "dot.png")
await show_attachment("dot.png")
print("ok")
"""


async def test_shown_image_rides_on_the_block_result(workspace: Path, tmp_path: Path) -> None:
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
        live = list(session._conversation.messages)
        events = [stored.event for stored in host.store.events(session.id)]
        block = next(e for e in events if isinstance(e, BlockFinished))
        (shown,) = block.images
        rebuilt = conversation_from_events(
            events, lambda key: load_shown_image(host.store, session.id, key)
        )
        row = host.store.get_attachment(session.id, shown)
        assert row is not None
        Path(row.path).unlink()
        gone = conversation_from_events(
            events, lambda key: load_shown_image(host.store, session.id, key)
        )
    finally:
        await host.close()

    image = ImagePart("image/png", base64.b64encode(PNG).decode("ascii"))
    for messages in (live, rebuilt):
        assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert messages[1].thinking == (ThinkingPart("Draw a dot."),)
        assert messages[2].images == (image,)
        assert messages[2].text == "ok"
    assert gone[2].images == ()
    assert f"attachment {shown}) is no longer stored" in gone[2].text
