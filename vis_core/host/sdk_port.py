"""One workspace's services as the host side of the SDK's sessions API reaches them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.agent.deps import SessionModel
from vis_core.agent.session import AgentSession
from vis_core.extension_host.host_port import HostPort
from vis_core.providers.base import ModelChoice
from vis_core.subagents.council import Council

if TYPE_CHECKING:
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.host.extensions import ExtensionCatalog
    from vis_core.host.models import ModelResolver
    from vis_core.host.session_factory import SessionFactory
    from vis_core.host.sessions import SessionRegistry
    from vis_core.host.workspace import Workspace
    from vis_core.mcp.host import HostMcp
    from vis_core.settings.service import SettingsService
    from vis_core.store import Store


@dataclass(frozen=True)
class SdkPort:
    """What ``vis.sessions``, ``vis.council`` and ``vis.attach`` reach of one workspace's Vis
    (a :class:`HostPort`), built by the composition root once the session factory exists;
    ``host_at``: the port of the Vis of another workspace root."""

    store: Store
    space: Workspace
    settings: SettingsService
    models: ModelResolver
    catalog: ExtensionCatalog
    registry: SessionRegistry
    factory: SessionFactory
    mcp: HostMcp
    host_at: Callable[[Path], Awaitable[HostPort]]
    loop: asyncio.AbstractEventLoop | None
    council: Council = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "council", Council(self.factory.subagents, self))

    @property
    def workspace(self) -> Path:
        return self.space.root

    @property
    def project_root(self) -> Path:
        return self.space.project_root

    def live_session(self, session_id: str) -> AgentSession | None:
        return self.registry.live_session(session_id)

    def config_data(self) -> Mapping[str, Any]:
        return self.models.config.data

    async def new_session(self) -> AgentSession:
        return await self.registry.new_session(self.factory.build, self.mcp.start)

    async def open_session(self, session_id: str) -> AgentSession:
        return await self.registry.open_session(session_id, self.factory.build, self.mcp.start)

    def session_model(
        self,
        choice: ModelChoice | None = None,
        *,
        script: Path | None = None,
        session_id: str | None = None,
    ) -> SessionModel:
        return self.models.session_model(choice, script=script, session_id=session_id)

    async def save_model(self, session_id: str, label: str) -> None:
        await self.settings.set("model", label, "session", session_id=session_id)

    async def move_to_group(self, session_id: str, group: str) -> None:
        await self.settings.move_to_group(session_id, group)

    def register_mcp_server(self, owner: str, server: McpServer) -> None:
        self.mcp.register(owner, server)
