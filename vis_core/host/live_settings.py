"""What a saved setting does to the open sessions: one table, read by the host's listener."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vis_core.agent.deps import ITERATIONS_SETTING
from vis_core.extension.settings_decl import SettingScope

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession
    from vis_core.host.models import ModelResolver
    from vis_core.host.sessions import SessionRegistry
    from vis_core.host.workspace import Confinement, Workspace
    from vis_core.sandbox import Sandbox
    from vis_core.settings.service import SaveResult, SettingsService
    from vis_core.tools import ToolContext


def max_iterations(settings: SettingsService, session_id: str) -> int:
    """How many blocks a turn of ``session_id`` may run (``max_iterations``)."""
    return int(settings.get("max_iterations", 50, session_id))


def block_time_limit(settings: SettingsService, session_id: str) -> float:
    """Seconds a block of ``session_id`` may run, 0: no limit (``block_time_limit``)."""
    return float(settings.get("block_time_limit", "1800", session_id))


@dataclass(frozen=True, eq=False)
class LiveSettings:
    """Brings a saved change to the open sessions of one workspace, on the host's loop (saves
    are awaited one after another): :data:`REACH` says what each setting a session read when
    it was built shapes in it, and from when. The other settings are read where they are used."""

    registry: SessionRegistry
    space: Workspace
    models: ModelResolver

    async def saved(self, result: SaveResult) -> None:
        reach = REACH.get(result.setting_id)
        if reach is None or not result.changed:
            return
        for session in list(self.registry.sessions):
            await reach(self, session, result)

    async def model(self, session: AgentSession, result: SaveResult) -> None:
        """Its next request goes to its effective model, unless it was given one directly
        (a child session's)."""
        using = session.next_model
        saved_for_it = result.scope is SettingScope.SESSION and result.session_id == session.id
        if using.chosen_for != session.id and not saved_for_it:
            return
        if using.provider is None or using.label != self.models.label_of(session.id):
            await session.switch_model(self.models.model_of_session(session.id))

    async def tools(self, session: AgentSession, result: SaveResult) -> None:
        """Its tools are built again for its next request."""
        tools = self.registry.session_tools.get(session.id)
        if tools is not None:
            session.between_requests(tools.reset)

    async def limits(self, session: AgentSession, result: SaveResult) -> None:
        """Its next request and the blocks it asks for keep to the new limits (a limit the
        command line gave, ``--max-turns``, stays)."""
        parts = self.registry.confined.get(session.id)
        settings = self.space.settings

        def apply() -> None:
            if session.limits.max_iterations_source == ITERATIONS_SETTING:
                session.limits.max_iterations = max_iterations(settings, session.id)
            if parts is not None:
                parts.set_time_limit(block_time_limit(settings, session.id))

        session.between_requests(apply)

    async def confinement(self, session: AgentSession, result: SaveResult) -> None:
        """Its next block runs in a new sandbox process under the new confinement, told as
        any restart is; its tools and shell commands keep to it at once."""
        parts = self.registry.confined.get(session.id)
        if parts is not None:
            await parts.confine(self.space.confinement(session.id), result.setting_id)


@dataclass(frozen=True)
class ConfinedParts:
    """What the settings that confine a session's children shape in it: its sandbox, and its
    tools' context with its shells."""

    sandbox: Sandbox
    tool_context: ToolContext

    async def confine(self, now: Confinement, setting: str) -> None:
        """The tools and shells keep to ``now`` at once, the sandbox from its next block
        (a new process; its restart note names ``setting``)."""
        await self.tool_context.confine(now)
        self.sandbox.confine(now, setting)

    async def follow_refusal(self, space: Workspace, session_id: str) -> None:
        """A settings file fixed (or broken) since changes why no block or shell command may
        run while the values stay the same, so no save brings it here: the refusal as read
        now holds from the next block (the sandbox process is kept when nothing else changed)."""
        if space.jail_policy(session_id)[1] != self.sandbox.refusal:
            await self.confine(space.confinement(session_id), "jail")

    def set_time_limit(self, seconds: float) -> None:
        self.tool_context.set_time_limit(seconds)
        self.sandbox.time_limit = seconds


Reach = Callable[[LiveSettings, "AgentSession", "SaveResult"], Awaitable[None]]
# what a saved value of each setting changes in the open sessions
REACH: dict[str, Reach] = {
    "model": LiveSettings.model,
    "introspection": LiveSettings.tools,
    "sessions_scope": LiveSettings.tools,
    "max_iterations": LiveSettings.limits,
    "block_time_limit": LiveSettings.limits,
    "jail": LiveSettings.confinement,
    "jail_home_writable": LiveSettings.confinement,
    "jail_read_paths": LiveSettings.confinement,
    "memory_limit": LiveSettings.confinement,
    "process_limit": LiveSettings.confinement,
}
