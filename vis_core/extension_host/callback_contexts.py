"""The call contexts the host gives extension callbacks of one session (op hooks, ``ctx``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from vis_core.extension.context import CallContext
from vis_core.extension.runtime import Runtime
from vis_core.model.channel import Channel


@dataclass
class CallbackContexts:
    """What one session's extension callbacks run in: the session, roots, channel, runtime
    and loop of the :class:`CallContext` it builds for each (op hooks, ``ctx``, prompts)."""

    session_id: str | None
    workspace_root: Path
    project_root: Path
    channel: Channel = Channel.TUI
    runtime: Runtime | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def context_for(self, owner: str) -> CallContext:
        """The context of a callback of extension ``owner`` in this session."""
        return CallContext(
            session_id=self.session_id,
            workspace_root=self.workspace_root,
            project_root=self.project_root,
            owner=owner,
            channel=self.channel,
            runtime=self.runtime,
            loop=self.loop,
        )
