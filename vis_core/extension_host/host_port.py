"""What the host side of the SDK's sessions API uses of one workspace's Vis (the composition
root builds it from the host's services: ``vis_core.host.sdk_port.SdkPort``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vis_core.events import Event, TurnEnded
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.extension_host.call_state import SessionCallState
    from vis_core.providers.base import ModelChoice
    from vis_core.store import Store


class OpenSession(Protocol):
    """An open agent session (``vis_core.agent.session.AgentSession``) as the host side of the
    SDK uses it: to notify and publish in it, start and cancel its turns, rename it, swap its
    model, and reach the state its calls share."""

    @property
    def id(self) -> str: ...

    title: str
    model: Any  # ``.label``, ``.provider``

    async def switch_model(self, model: Any) -> None: ...  # a ``HostPort.session_model()``

    @property
    def running(self) -> bool: ...  # a turn runs

    @property
    def call_state(self) -> SessionCallState: ...

    async def emit(self, event: Event) -> None: ...  # saved, then published

    async def submit(self, text: str) -> TurnEnded: ...  # runs one turn

    def cancel(self) -> None: ...  # the running turn


class HostPort(Protocol):
    """One workspace's Vis as ``vis.sessions``, ``vis.council`` and ``vis.attach`` reach it:
    its store, folders, loop and open sessions; opening sessions, choosing their model."""

    @property
    def store(self) -> Store: ...

    @property
    def workspace(self) -> Path: ...

    @property
    def project_root(self) -> Path: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...  # where sessions run

    def live_session(self, session_id: str) -> OpenSession | None: ...  # open here, if it is

    @property
    def council(self) -> Any: ...  # ``vis.council`` of these sessions

    def config_data(self) -> Mapping[str, Any]: ...  # the merged config.toml

    async def new_session(self) -> OpenSession: ...

    async def open_session(self, session_id: str) -> OpenSession: ...

    def host_at(self, root: Path, /) -> Awaitable[HostPort]: ...  # another workspace root's Vis

    def session_model(
        self,
        choice: ModelChoice | None = None,
        *,
        script: Path | None = None,
        session_id: str | None = None,
    ) -> Any:
        """A fresh provider and model for a session (``.provider`` None: ``.problem`` says why)."""
        ...

    async def save_model(self, session_id: str, label: str) -> None: ...  # its ``model``

    async def move_to_group(self, session_id: str, group: str) -> None: ...  # values follow

    def register_mcp_server(self, owner: str, server: McpServer) -> None: ...  # on the loop
