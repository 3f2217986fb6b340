"""A saved change reaches a live session on the loop, between requests, never mid-request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from vis_core.agent.deps import SessionModel
from vis_core.events import UsageReported
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths
from vis_core.providers.base import ModelRequest, StreamEvent
from vis_core.providers.scripted import ScriptedProvider

SCRIPT = """\
- text: "Looking at it now, one piece at a time."
  chunk: 4
  code: print("ran")
- text: "Done."
"""


class HeldProvider(ScriptedProvider):
    """The scripted model, holding its first response open after one piece until let go."""

    def __init__(self, script: Path) -> None:
        super().__init__(script)
        self.streaming = asyncio.Event()  # the first request is under way
        self.go_on = asyncio.Event()

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        first = not self.requests
        async for event in super()._stream(request):
            yield event
            if first and not self.go_on.is_set():
                self.streaming.set()
                await self.go_on.wait()


async def test_a_model_saved_mid_request_applies_when_the_request_ends(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    VisPaths.from_env().ensure().config_file.write_text('model = "scripted/first"\n')
    host = await Host.open(HostOptions(workspace=workspace, script=script))  # the setting decides
    try:
        session = await host.new_session()
        held = HeldProvider(script)
        await session.switch_model(SessionModel(held, "first", "scripted/first"))
        usage: list[str] = []
        session.subscribe(lambda e: usage.append(e.model), kinds=(UsageReported,))
        turn = asyncio.create_task(session.submit("look"))
        await held.streaming.wait()

        saved = await host.settings.set(
            "model", "scripted/second", "session", session_id=session.id
        )
        assert saved.changed
        assert session.model.label == "scripted/first"  # the request under way keeps its model
        assert session.next_model.label == "scripted/second"
        held.go_on.set()
        ended = await turn

        assert ended.status == "completed", ended.error
        assert len(held.requests) == 1  # the second request went to the new model
        assert usage == ["scripted/first", "scripted/second", "scripted/second"]
        assert session.model.label == "scripted/second"
        assert session.next_model is session.model
    finally:
        await host.close()
