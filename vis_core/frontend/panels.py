"""What the Settings and MCP screens read and change, as verbs: no core service is lent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.extension.settings_decl import SettingScope
from vis_core.mcp.client import ServerConnection, State
from vis_core.mcp.config import Exposure, Source, Transport
from vis_core.mcp.manager import McpManager, attention_first, wait_settled
from vis_core.settings.rows import RowState, row_state
from vis_core.settings.service import SaveResult, SettingsService
from vis_core.settings.storage import PROJECT_SETTINGS
from vis_core.settings.tree import SettingNode, SettingsTree, build_tree
from vis_core.system.redaction import hide_credentials


class SettingsPanel:
    """The settings tree as the Settings screen shows and saves it (every scope)."""

    def __init__(self, service: SettingsService) -> None:
        self._service = service

    @property
    def project_root(self) -> Path:
        return self._service.project_root

    @property
    def project_settings(self) -> Path:
        """The project's settings file, relative to its root: where a project extension's
        settings are saved at global scope too (for it, global means the whole project)."""
        return PROJECT_SETTINGS

    def tree(self) -> SettingsTree:
        """Vis's settings and each extension's, from declarations (no extension code runs)."""
        return build_tree(self._service.extensions)

    def notes(self) -> list[str]:
        """The keys of the settings files Vis ignores, one note per file (no row shows them)."""
        return self._service.unknown_notes()

    def group(self, session_id: str | None) -> str | None:
        """The settings group session ``session_id`` is in."""
        return self._service.session_group(session_id)

    def rows(
        self, scope: SettingScope, session_id: str | None
    ) -> Callable[[SettingNode], RowState]:
        """Each setting's row at ``scope``; the session's saved values are read once for all."""
        service = self._service
        preloaded = service.preload(session_id)
        group = service.session_group(session_id)
        return lambda node: row_state(service, node, scope, session_id, preloaded, group)

    async def catch_up(self, session_id: str | None) -> None:
        """What another process saved since (``vis settings set`` in a second terminal) is
        read, and reaches the open sessions as a save does."""
        await self._service.catch_up(session_id)

    async def set(
        self,
        setting_id: str,
        value: Any,
        scope: SettingScope | str,
        *,
        session_id: str | None = None,
    ) -> SaveResult:
        """Save ``value`` at ``scope`` (ValueError says why not); awaits ``on_change``."""
        return await self._service.set(setting_id, value, scope, session_id=session_id)

    async def reset(
        self, setting_id: str, scope: SettingScope | str, *, session_id: str | None = None
    ) -> SaveResult:
        return await self._service.reset(setting_id, scope, session_id=session_id)

    async def set_enabled(self, extension: str, enabled: bool) -> None:
        """Switch an extension on or off; it takes effect at the next reload."""
        await self._service.set_enabled(extension, enabled)


@dataclass(frozen=True)
class McpServerView:
    """One MCP server as the ``/mcp`` screen shows it, read when asked."""

    name: str
    state: State
    enabled: bool
    exposure: Exposure
    source: Source
    origin: str  # the file that declares it
    transport: Transport
    target: str  # its URL (credentials masked), else its command line
    about: str  # its description, else the instructions it sent
    error: str | None
    stderr_tail: str  # the last lines it wrote to stderr
    tools: tuple[tuple[str, Exposure], ...]  # each tool's name and exposure

    @classmethod
    def of(cls, conn: ServerConnection) -> McpServerView:
        server = conn.config
        return cls(
            server.name,
            conn.state,
            server.enabled,
            server.exposure,
            server.source,
            str(server.origin),
            server.transport,
            hide_credentials(server.url) or " ".join([server.command, *server.args]),
            server.description or conn.instructions or "",
            conn.error,
            conn.stderr_tail(),
            tuple((tool.name, server.exposure_of(tool.tool)) for tool in conn.tools),
        )


async def settled(conns: list[ServerConnection]) -> list[McpServerView]:
    """``conns`` once each has connected or failed (up to its own timeout)."""
    await wait_settled(conns)
    return [McpServerView.of(conn) for conn in conns]


class McpPanel:
    """The workspace's MCP servers as the ``/mcp`` screen lists and changes them."""

    def __init__(self, manager: McpManager) -> None:
        self._manager = manager

    def follow(self, changed: Callable[[], None]) -> Callable[[], None]:
        """Call ``changed`` when a server connects, fails or is changed; returns the unfollow."""
        listeners = self._manager.listeners
        listeners.append(changed)
        return lambda: listeners.remove(changed) if changed in listeners else None

    def servers(self) -> list[McpServerView]:
        """Every server, those that need the person first."""
        return [McpServerView.of(conn) for conn in attention_first(self._manager.connections())]

    def server(self, name: str) -> McpServerView | None:
        conn = self._manager.get(name)
        return None if conn is None else McpServerView.of(conn)

    def problems(self) -> list[str]:
        """The ``mcp.json`` entries that cannot run, each saying why."""
        return [str(problem) for problem in self._manager.config.problems]

    def overridden(self) -> list[str]:
        """The servers extensions add that a file entry of the same name overrides, each
        saying which entry wins (as ``vis mcp list`` says it)."""
        from vis_core.mcp.cli import overridden_lines

        return overridden_lines(self._manager)

    def reconnect(self, name: str) -> Awaitable[str]:
        return self._manager.reconnect(name)

    def set_enabled(self, name: str, enabled: bool) -> Awaitable[str]:
        return self._manager.set_enabled(name, enabled)

    def set_exposure(self, name: str, exposure: Exposure) -> Awaitable[str]:
        return self._manager.set_exposure(name, exposure)

    def sign_in(
        self,
        name: str,
        *,
        show: Callable[[str, bool], Awaitable[None] | None],
        listening: Callable[[Any], None],
    ) -> Awaitable[str]:
        """Sign in to server ``name`` (``show``: the page to open; ``listening``: the redirect
        listener, which takes a pasted address), then reconnect it."""
        from vis_core.mcp.oauth_login import login_server

        return login_server(self._manager, name, show=show, listening=listening)

    def sign_out(self, name: str) -> Awaitable[str]:
        from vis_core.mcp.oauth_login import logout_server

        return logout_server(self._manager, name)
