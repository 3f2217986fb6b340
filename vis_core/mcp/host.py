"""MCP in a running Vis: the manager a host owns and what its sessions take from it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.mcp.config import (
    ConfigProblem,
    McpConfig,
    ServerConfig,
    Source,
    load_config,
    parse_entry,
)
from vis_core.mcp.manager import McpManager, McpWaitingSandbox
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.extension_host.tool_hooks import ToolHooks


class HostMcp:
    """The host's MCP servers, shared by its sessions."""

    def __init__(
        self,
        manager: McpManager,
        clear_tools: Callable[[], None],
        read_config: Callable[[], McpConfig] | None = None,
    ) -> None:
        self.manager = manager
        self._read_config = read_config
        self._clear_tools = clear_tools
        self._started = False
        self._reloading: asyncio.Task[None] | None = None
        self._turn_session: Any = None  # the session whose turn started last
        self._reports: set[asyncio.Task[None]] = set()
        manager.listeners.append(clear_tools)
        manager.listeners.append(self._report_soon)

    def register(self, owner: str, declared: Any) -> None:
        """``vis.mcp_server`` called at run time: the server joins (a file entry wins)."""
        try:
            server = parse_entry(
                declared.name, dict(declared.config), source=Source.EXTENSION, origin=owner
            )
        except ValueError as exc:
            self.manager.add_problem(ConfigProblem(f"extension {owner!r}", declared.name, str(exc)))
            return
        self.manager.add_registered([server])

    def reload_soon(self) -> None:
        """``/reload``: read mcp.json again and apply it in the background."""
        if self._read_config is None:
            return
        config = self._read_config()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._reloading = loop.create_task(self.manager.reload(config))

    def start(self) -> None:
        if not self._started:
            self._started = True
            self.manager.start()

    def host_tools(self, hooks: ToolHooks | None, output_dir: Path) -> list[HostTool]:
        return self.manager.host_tools(hooks, output_dir)

    def note_found(self, session_id: str, names: list[str]) -> None:
        self.manager.note_found(session_id, names)

    def wrap_sandbox(self, sandbox: Any) -> Any:
        return McpWaitingSandbox(sandbox, self.manager)

    def direct_tools(
        self, session_id: str, output_dir: Path, show: Callable[[str], None]
    ) -> list[Any]:
        """The tools declared to ``session_id``'s model directly; ``show`` shows a stored image
        to it with the result."""
        from vis_core.agent.session import DirectTool

        return [
            DirectTool(spec.definition, spec.host_name, spec.present)
            for spec in self.manager.direct_specs(session_id, output_dir, show)
        ]

    def prompt_for_session(self) -> Callable[[], str]:
        """The session's ``MCP servers`` section: kept as first sent; a changed section is
        appended after it instead of rewriting it (the earlier prompt text stays the same)."""
        sent: list[str] = []
        last: list[str] = [""]

        def section() -> str:
            current = self.manager.prompt_section()
            if current and current != last[0]:
                last[0] = current
                heading = "## MCP servers (updated)" if sent else "## MCP servers"
                sent.append(current.replace("## MCP servers", heading, 1))
            return "".join(f"\n\n{text}" for text in sent)

        return section

    async def before_turn(self, session: Any) -> None:
        """The first prompt waits for direct-tool servers; problems are reported once."""
        await self.manager.before_first_prompt()
        self._turn_session = session
        await self._report(session)

    async def _report(self, session: Any) -> None:
        from vis_core.events import Notification
        from vis_core.model.notify import NotifyKind

        for note in self.manager.unreported():
            await session.emit(Notification(session.id, text=note, kind=NotifyKind.WARN))

    def _report_soon(self) -> None:
        """A server that fails while a turn runs is reported in that turn's transcript."""
        session = self._turn_session
        if session is None or not getattr(session, "running", False):
            return
        try:
            task = asyncio.get_running_loop().create_task(self._report(session))
        except RuntimeError:
            return
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.manager.listeners.remove(self._clear_tools)
        with contextlib.suppress(Exception):
            self.manager.listeners.remove(self._report_soon)
        await self.manager.close()


def registered_servers(host: Any) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """Servers the loaded extensions declare with ``vis.mcp_server`` (and their problems)."""
    servers: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    for ext in getattr(host.extensions, "enabled", ()):
        declaration = getattr(ext, "declaration", None)
        for decl in getattr(declaration, "mcp_servers", ()) or ():
            try:
                servers.append(
                    parse_entry(
                        decl.name, dict(decl.config), source=Source.EXTENSION, origin=ext.name
                    )
                )
            except ValueError as exc:
                problems.append(ConfigProblem(f"extension {ext.name!r}", decl.name, str(exc)))
    return servers, problems


def host_mcp(host: Any) -> HostMcp:
    def read_config() -> McpConfig:
        registered, problems = registered_servers(host)
        config = load_config(
            host.paths.mcp_file, host.project_root, trusted=host.trusted, registered=registered
        )
        return dataclasses.replace(config, problems=(*config.problems, *problems))

    manager = McpManager(read_config(), workspace=host.workspace, paths=host.paths)

    return HostMcp(manager, host.reset_session_tools, read_config)
