"""MCP in a running Vis: the manager a host owns and what its sessions take from it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.system.loops import end_tasks, keep

if TYPE_CHECKING:
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.extension_host.tool_hooks import ToolHooks
    from vis_core.mcp.client import ServerConnection
    from vis_core.mcp.config import ConfigProblem, McpConfig, ServerConfig
    from vis_core.mcp.manager import McpManager
    from vis_core.paths import ControlSnapshot, VisPaths
    from vis_core.store import Store
    from vis_core.tools.registry import HostTool


# The store's namespace of the deferred tools each session's searches declared: they stay
# declared when the session is resumed (``vis run --continue``).
FOUND_KEY = "vis.mcp"


class HostMcp:
    """The host's MCP servers, shared by its sessions. The manager is made when a config names
    servers (the user's or trusted project's ``mcp.json``, an extension's declaration): at
    once, at ``/reload``, when an extension registers one, or when ``/mcp`` or its screen asks
    for it; until then sessions get no MCP tools, prompt text or waits."""

    def __init__(self, deps: McpDeps) -> None:
        self._deps = deps
        self._recalled: set[str] = set()  # sessions whose stored finds the manager has
        self._sections: dict[str, PromptSection] = {}  # by session id
        self._manager: McpManager | None = None
        self._started = False
        self._held = False  # the servers start with the first turn (:meth:`hold`)
        self._reloading: asyncio.Task[None] | None = None
        self._turn_session: Any = None  # the session whose turn started last
        self._reports: set[asyncio.Task[None]] = set()
        self._joined: list[ServerConfig] = []  # servers an editor passed (ACP)
        if self._configured():
            self._make()

    def _make(self) -> McpManager:
        from vis_core.mcp.manager import McpManager

        manager = McpManager(self.config(), workspace=self._deps.workspace, paths=self._deps.paths)
        manager.listeners.append(self._deps.clear_tools)
        manager.listeners.append(self._report_soon)
        self._manager = manager
        if self._started:
            manager.start()
        return manager

    @property
    def manager(self) -> McpManager:
        """The manager, made now if there was none (``/mcp`` shows it either way)."""
        return self._manager if self._manager is not None else self._make()

    @property
    def made(self) -> McpManager | None:
        """The manager if one was made (no config named a server: none)."""
        return self._manager

    def config(self) -> McpConfig:
        """The servers the files and the enabled extensions name, read now (no connection)."""
        from vis_core.mcp.config import load_config

        deps = self._deps
        registered, problems = parsed_servers(declared_servers(deps.extensions()))
        config = load_config(
            deps.paths.mcp_file,
            deps.project_root,
            trusted=deps.trusted(),
            registered=registered,
            snapshot=deps.control_files(),
        )
        return dataclasses.replace(config, problems=(*config.problems, *problems))

    def _configured(self) -> bool:
        """Whether a file or an extension declares servers (what :meth:`config` reads)."""
        deps = self._deps
        if deps.paths.mcp_file.exists() or declared_servers(deps.extensions()):
            return True
        try:
            project = deps.control_files().read(".vis/mcp.json")
        except OSError:  # unreadable: config() reports it
            return deps.trusted()
        return deps.trusted() and project is not None

    def register(self, owner: str, declared: Any) -> None:
        """``vis.mcp_server`` called at run time: the server joins (a file entry wins)."""
        servers, problems = parsed_servers([(owner, declared)])
        for problem in problems:
            self.manager.add_problem(problem)
        if servers:
            self.manager.add_registered(servers)

    def join(self, servers: list[ServerConfig]) -> list[ServerConnection]:
        """Servers an editor passes over ACP: they join like a file's entries for the rest of
        this run (``/reload`` keeps them; a file entry of the same name wins). Their
        connections, started."""
        manager = self.manager
        new = [s for s in servers if s not in self._joined]
        self._joined += new
        manager.add_registered(new)
        return [c for s in servers if (c := manager.get(s.name)) is not None and c.config == s]

    def _with_joined(self, config: McpConfig) -> McpConfig:
        keys = {s.key for s in config.servers}
        joined = tuple(s for s in self._joined if s.key not in keys)
        return dataclasses.replace(config, servers=(*config.servers, *joined))

    def reload_soon(self) -> None:
        """``/reload``: read mcp.json again and apply it in the background."""
        if self._manager is None:  # made now from the config as it is, if it names servers
            if self._configured():
                self._make()
                self._deps.clear_tools()
            return
        config = self._with_joined(self.config())
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._reloading = loop.create_task(self._manager.reload(config))

    def hold(self) -> None:
        """Start no server when a session opens, only when a turn starts: ``vis run
        "/command"``, whose command (``/goal``, ``/context``, an extension's) may send no
        request, starts no server it does not use and says none was stopped."""
        self._held = True

    def start(self) -> None:
        """Connect the servers in the background (once; a session calls it as it opens)."""
        if not self._started and not self._held:
            self._started = True
            if self._manager is not None:
                self._manager.start()

    async def settle(self) -> McpManager:
        """The manager once every server connected or failed (each up to its own timeout),
        started now in a run that held them: what ``/mcp`` prints outside the TUI."""
        from vis_core.mcp.manager import wait_settled

        manager = self.manager
        self._held = False
        self.start()
        await wait_settled(manager.connections())
        return manager

    def host_tools(self, hooks: ToolHooks | None, output_dir: Path) -> list[HostTool]:
        if self._manager is None:
            return []
        return self._manager.host_tools(hooks, output_dir)

    def note_found(self, session_id: str, names: list[str]) -> None:
        manager = self._manager
        if manager is None:
            return
        self._recall(manager, session_id)
        if manager.note_found(session_id, names):
            found = sorted(manager.found(session_id))
            self._deps.store.state_set(FOUND_KEY, f"deferred:{session_id}", found)

    def namespace_doc(self, name: str) -> str | None:
        """``doc("mcp__<server>")``: that server's description, instructions and tools."""
        return None if self._manager is None else self._manager.namespace_doc(name)

    def described_tools(self, matches: Callable[[str], object]) -> list[str]:
        """Tools whose server's description ``matches`` (for ``apropos``)."""
        return [] if self._manager is None else self._manager.described_tools(matches)

    def _recall(self, manager: McpManager, session_id: str) -> None:
        """The deferred tools earlier runs of ``session_id`` declared, declared again."""
        if session_id in self._recalled:
            return
        self._recalled.add(session_id)
        names = self._deps.store.state_get(FOUND_KEY, f"deferred:{session_id}", [])
        manager.restore_found(
            session_id, [str(n) for n in names] if isinstance(names, list) else []
        )

    async def wait_named(self, code: str) -> None:
        """A block that names ``mcp__<server>`` waits for that server before it runs."""
        manager = self.made
        if manager is not None:
            await manager.wait_named(code)

    def missing_note(self, error: str) -> str | None:
        """Why the MCP tools a block's NameError names are missing (their server failed)."""
        manager = self.made
        return None if manager is None else manager.missing_note(error)

    def direct_tools(
        self, session_id: str, output_dir: Path, show: Callable[[str], None]
    ) -> list[Any]:
        """The tools declared to ``session_id``'s model directly; ``show`` shows a stored image
        to it with the result."""
        if self._manager is None:
            return []
        self._recall(self._manager, session_id)
        return self._manager.direct_specs(session_id, output_dir, show)

    def prompt_for_session(self, session_id: str = "") -> PromptSection:
        """The session's ``MCP servers`` section of the system prompt, kept as first sent; a
        changed section goes to the conversation when a turn starts (:meth:`before_turn`), so
        the system prompt and earlier messages stay as they were (and cached)."""
        section = PromptSection(self._current_section)
        self._sections[session_id] = section
        return section

    def _current_section(self) -> str:
        manager = self._manager
        return manager.prompt_section() if manager is not None else ""

    async def before_turn(self, session: Any) -> None:
        """The first prompt waits for direct-tool servers; problems are reported once."""
        self._held = False
        self.start()
        if self._manager is None:
            return
        from vis_core.mcp.oauth_session import reconnect_signed_in

        self._recall(self._manager, session.id)
        await self._manager.before_first_prompt(session.id)
        await reconnect_signed_in(self._manager)  # signed in from a shell since
        self._turn_session = session
        section = self._sections.get(session.id)
        update = section.update() if section is not None else None
        if update is not None:
            from vis_core.events import ContextNote

            turns = session.conversation.turns
            turn_id = turns[max(turns)].turn_id if turns else ""
            await session.emit(
                ContextNote(session.id, turn_id=turn_id, topic="mcp_servers", text=update)
            )
        await self._report(session)

    async def _report(self, session: Any) -> None:
        from vis_core.events import Notification
        from vis_core.model.notify import NotifyKind

        if self._manager is None:
            return
        for note in self._manager.unreported(self._deps.details):
            await session.emit(Notification(session.id, text=note, kind=NotifyKind.WARN))

    async def startup_notes(self, wait: float) -> list[str]:
        """After the start: config problems and the servers that failed to connect within
        ``wait`` seconds, each once (a turn that starts first says them in its transcript; a
        server that fails later is said in the turn it fails in, or at the next one)."""
        manager = self._manager
        if manager is None:
            return []
        await manager.wait_all(wait)
        return manager.unreported(self._deps.details)

    async def last_notes(self, wait: float) -> list[str]:
        """Before a ``vis run`` ends: the servers still connecting get up to ``wait`` seconds
        to settle (a misconfigured one fails within about a second); what was not reported
        yet (each failure once, whether the turn was quick or slow), and the servers still
        connecting, which the run's end stops."""
        manager = self._manager
        if manager is None:
            return []
        await end_tasks(self._reports, cancel=False)  # reports under way are said in the turn
        notes = await self.startup_notes(wait)
        return notes + manager.still_connecting(self._deps.details)

    def _report_soon(self) -> None:
        """A server that fails while a turn runs is reported in that turn's transcript."""
        session = self._turn_session
        if session is None or not getattr(session, "running", False):
            return
        with contextlib.suppress(RuntimeError):  # no running loop: no turn to report in
            keep(self._reports, asyncio.get_running_loop().create_task(self._report(session)))

    async def close(self) -> None:
        manager = self._manager
        if manager is None:
            return
        for listener in (self._deps.clear_tools, self._report_soon):  # the two _make added
            with contextlib.suppress(Exception):
                manager.listeners.remove(listener)
        reloading = () if self._reloading is None else (self._reloading,)
        await end_tasks([*reloading, *self._reports])
        await manager.close()


class PromptSection:
    """One session's ``MCP servers`` section: the system prompt keeps the text it first sent;
    :meth:`update` gives a changed section once, for the conversation."""

    UPDATED = "## MCP servers (updated)"

    def __init__(self, current: Callable[[], str]) -> None:
        self._current = current
        self._first: str | None = None  # what the system prompt carries (None: not built yet)
        self._last = ""  # the section the model has seen last

    def __call__(self) -> str:
        if self._first is None:
            self._first = self._last = self._current()
        return f"\n\n{self._first}" if self._first else ""

    def update(self) -> str | None:
        """The section with its ``(updated)`` heading when it changed since the model saw it
        (None before the first request: the system prompt carries it then)."""
        if self._first is None:
            return None
        current = self._current()
        if not current or current == self._last:
            return None
        self._last = current
        return current.replace("## MCP servers", self.UPDATED, 1)


@dataclasses.dataclass(frozen=True)
class McpDeps:
    """What a host's MCP servers use of its services (the composition root builds it)."""

    paths: VisPaths
    workspace: Path
    project_root: Path
    trusted: Callable[[], bool]
    control_files: Callable[[], ControlSnapshot]  # as read and checked against trust
    extensions: Callable[[], LoadedExtensions]
    store: Store
    clear_tools: Callable[[], None]  # the sessions' tool lists are built again
    details: str  # where a server's problem is shown in full (`/mcp`, `vis mcp list`)


def declared_servers(extensions: LoadedExtensions) -> list[tuple[str, Any]]:
    """``(extension, vis.McpServer)`` of each server the enabled extensions declare."""
    return [
        (ext.name, decl)
        for ext in extensions.enabled
        for decl in getattr(ext.declaration, "mcp_servers", ()) or ()
    ]


def parsed_servers(
    declared: list[tuple[str, Any]],
) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """The servers of ``(extension, vis.McpServer)`` declarations, and their problems."""
    from vis_core.mcp.config import ConfigProblem, Source, parse_entry

    servers: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    for owner, decl in declared:
        try:
            servers.append(
                parse_entry(decl.name, dict(decl.config), source=Source.EXTENSION, origin=owner)
            )
        except ValueError as exc:
            problems.append(ConfigProblem(f"extension {owner!r}", decl.name, str(exc)))
    return servers, problems
