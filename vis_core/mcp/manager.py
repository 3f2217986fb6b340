"""The MCP servers of one running Vis: connections, their tools per exposure, the prompt."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.mcp.client import ATTENTION, ServerConnection, State, ToolInfo
from vis_core.mcp.config import (
    ConfigProblem,
    Exposure,
    McpConfig,
    ServerConfig,
    Source,
    server_key,
)
from vis_core.mcp.edit import set_field
from vis_core.mcp.launch import start_folder
from vis_core.mcp.logfile import McpLog
from vis_core.mcp.names import PREFIX, safe, tool_names
from vis_core.model.conversation import ToolDefinition
from vis_core.paths import TrustStore
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.agent.deps import DirectTool
    from vis_core.extension_host.tool_hooks import ToolHooks
    from vis_core.paths import VisPaths

FIRST_PROMPT_WAIT = 10.0
SETTLE = 10.0  # seconds beyond its timeout a failed connection may take to stop its server
# states whose listed tools stay callable: a dropped connection reconnects on the next call
REACHABLE = (State.CONNECTED, State.DISCONNECTED, State.CONNECTING, State.FAILED)
_SEARCH = re.compile(r"\bapropos\s*\(")  # a block that searches tools waits for every server
_NAMED = re.compile(r"\bmcp__([A-Za-z0-9_-]+)")  # a server, or a server's tool
_UNDEFINED = re.compile(r"NameError: name 'mcp__(\w+)' is not defined")


class McpManager:
    """Starts, lists, calls and stops the configured (and extension-registered) servers."""

    def __init__(
        self,
        config: McpConfig,
        *,
        workspace: Path,
        paths: VisPaths,
        first_prompt_wait: float = FIRST_PROMPT_WAIT,
    ) -> None:
        self.config = config
        self.first_prompt_wait = first_prompt_wait  # how long the first prompt waits at most
        self.workspace = workspace
        self.mcp_log = McpLog(paths.log_dir / "mcp.log")
        self.start_dir = start_folder(paths)  # where the person's stdio servers start
        self._trust = TrustStore(paths)
        self.listeners: list[Callable[[], None]] = []
        self._connections: dict[str, ServerConnection] = {}
        self._reported: set[str] = set()
        self._first_prompt_done = False
        self._waited: set[str] = set()  # sessions whose first prompt waited for their finds
        self._loaded: dict[str, set[str]] = {}  # session id -> deferred tools found by a search
        for server in config.servers:
            self._connections[server.key] = self._connection(server)

    def _connection(self, server: ServerConfig) -> ServerConnection:
        return ServerConnection(
            server,
            workspace=self.workspace,
            mcp_log=self.mcp_log,
            on_change=self._changed,
            start_dir=self.start_dir,
        )

    def _changed(self, _conn: ServerConnection | None = None) -> None:
        self._name_tools()
        for listener in list(self.listeners):
            listener()

    def _name_tools(self) -> None:
        """Name every server's tools apart from every other server's: a connection names its
        own, and two servers can make one name (``a``'s ``b__c``, ``a__b``'s ``c``)."""
        conns = self.connections()
        names = tool_names((c.name, t.tool) for c in conns for t in c.tools)
        for conn in conns:
            if any(t.name != names[conn.name, t.tool] for t in conn.tools):
                conn.tools = [
                    dataclasses.replace(t, name=names[conn.name, t.tool]) for t in conn.tools
                ]

    # -- servers -------------------------------------------------------------------------

    def connections(self) -> list[ServerConnection]:
        return list(self._connections.values())

    def get(self, name: str) -> ServerConnection | None:
        return self._connections.get(server_key(name.removeprefix(PREFIX)))

    def start(self) -> None:
        """Connect every enabled server in the background (needs a running loop)."""
        for conn in self._connections.values():
            conn.start()

    def add_registered(self, servers: Iterable[ServerConfig]) -> None:
        """Servers an extension registers at run time; a file entry of the same name wins."""
        for server in servers:
            if server.key in self._connections:
                self.config = dataclasses.replace(
                    self.config, overridden=(*self.config.overridden, server)
                )
                continue
            self.config = dataclasses.replace(self.config, servers=(*self.config.servers, server))
            conn = self._connection(server)
            self._connections[server.key] = conn
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop()
                conn.start()
        self._changed()

    async def reload(self, config: McpConfig) -> None:
        """``/reload``: new servers connect, removed ones stop, changed ones restart."""
        old = self._connections
        fresh: dict[str, ServerConnection] = {}
        for server in config.servers:
            conn = old.get(server.key)
            if conn is not None and conn.config == server:
                fresh[server.key] = conn
                continue
            if conn is not None:
                await conn.stop()
            fresh[server.key] = self._connection(server)
        for key, conn in old.items():
            if key not in fresh:
                await conn.stop()
        self._connections, self.config = fresh, config
        self.start()
        self._changed()

    def add_problem(self, problem: ConfigProblem) -> None:
        self.config = dataclasses.replace(self.config, problems=(*self.config.problems, problem))
        self._changed()

    async def wait_for(self, conns: Iterable[ServerConnection], timeout: float | None) -> None:
        async with asyncio.TaskGroup() as group:
            for conn in conns:
                if conn.state is State.CONNECTING:
                    group.create_task(conn.wait_ready(timeout))

    async def wait_all(self, timeout: float | None = None) -> None:
        await self.wait_for(self.connections(), timeout)

    async def wait_named(self, code: str) -> None:
        """A block that names ``mcp__<server>`` waits for that server (up to its timeout); one
        that calls ``apropos`` waits for every server still connecting, as long as the first
        prompt waits for direct tools."""
        wanted = self._meant(m.group(1) for m in _NAMED.finditer(code))
        if re.search(
            r"\b(list_mcp_resources|list_mcp_resource_templates|read_mcp_resource)\b", code
        ):
            wanted = self.connections()
        for conn in wanted:
            if conn.config.enabled and conn.state in (State.DISCONNECTED, State.FAILED):
                conn.start()  # a dropped connection reconnects on the next use
        await wait_settled(wanted)
        if _SEARCH.search(code):  # a search sees every server: up to the direct tools' bound
            await self.wait_for(self.connections(), self.first_prompt_wait)

    def _meant(self, names: Iterable[str]) -> list[ServerConnection]:
        """The servers ``names`` (what follows ``mcp__``) may mean: ``a__b__c`` is server a's
        tool b__c or server a__b's tool c."""
        named = {safe(name) for name in names}
        return [
            c
            for c in self.connections()
            if any(n == safe(c.name) or n.startswith(f"{safe(c.name)}__") for n in named)
        ]

    def missing_note(self, error: str) -> str | None:
        """Why the ``mcp__…`` names a block's ``error`` says are not defined are missing, when
        their server has no tools to call (it failed, needs sign-in, is disabled): the model
        is told that instead of a bare NameError, which a typo gives too."""
        reached = {id(conn) for conn, _, _ in self.reachable()}
        notes = []
        for conn in self._meant(_UNDEFINED.findall(error)):
            if conn.state is State.CONNECTED or id(conn) in reached:
                continue
            said = {State.FAILED: "failed", State.NEEDS_SIGN_IN: "needs sign-in"}.get(
                conn.state, f"is {conn.state.value}"
            )
            retried = conn.config.enabled and conn.state in (State.FAILED, State.DISCONNECTED)
            notes.append(
                f"MCP server {conn.name!r} {said}"
                + (f": {conn.error}" if conn.error else "")
                + "; its tools are defined once it connects"
                + (" (a block that names it tries again)" if retried else "")
            )
        return "\n".join(notes) or None

    async def before_first_prompt(self, session_id: str | None = None) -> None:
        """The first prompt waits up to 10 s, only for servers with direct tools (and for
        those whose deferred tools an earlier run of ``session_id`` declared)."""
        wanted: list[ServerConnection] = []
        if not self._first_prompt_done:
            self._first_prompt_done = True
            wanted = [
                c
                for c in self.connections()
                if c.config.enabled
                and (
                    c.config.exposure is Exposure.DIRECT
                    or any(e is Exposure.DIRECT for _, e in c.config.tool_exposure)
                )
            ]
        if session_id is not None and session_id not in self._waited:
            self._waited.add(session_id)
            found = self.found(session_id)
            wanted += [
                c
                for c in self.connections()
                if c not in wanted and any(n.startswith(f"{PREFIX}{safe(c.name)}__") for n in found)
            ]
        await self.wait_for(wanted, self.first_prompt_wait)

    def unreported(self, details: str) -> list[str]:
        """Config problems and failed connections not yet reported (each once); ``details``
        says where the person finds more (the TUI's ``/mcp``, ``vis mcp list`` in a shell)."""
        notes: list[str] = []
        for problem in self.config.problems:
            skipped = "the entry was skipped" if problem.server else "the file was skipped"
            text = f"MCP config: {problem}; {skipped}"
            if text not in self._reported:
                self._reported.add(text)
                notes.append(text)
        for conn in self.connections():
            if conn.state in (State.FAILED, State.NEEDS_SIGN_IN):
                key = f"{conn.name}:{conn.state}:{conn.error}"
                if key not in self._reported:
                    self._reported.add(key)
                    tail = conn.stderr_tail().strip().splitlines()[-1:]
                    said = f"; its stderr ends: {tail[0][:200]}" if tail else ""
                    notes.append(
                        f"MCP server {conn.name!r} {conn.state.value}: {conn.error}{said}; "
                        + details
                    )
        return notes

    def status_shown(self) -> None:
        """``/mcp`` printed every server's state: its problems so far are not told again."""
        self.unreported("")

    def still_connecting(self, details: str) -> list[str]:
        """Notes of the servers not connected yet, which a run that ends now stops."""
        return [
            f"MCP server {conn.name!r} was still connecting when the run ended and was "
            f"stopped; {details}"
            for conn in self.connections()
            if conn.state is State.CONNECTING
        ]

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections()), return_exceptions=True)

    # -- changes saved to the defining file ------------------------------------------------

    def _replace(self, conn: ServerConnection, server: ServerConfig) -> None:
        conn.config = server
        self.config = dataclasses.replace(
            self.config,
            servers=tuple(server if s.key == server.key else s for s in self.config.servers),
        )

    async def set_enabled(self, name: str, enabled: bool) -> str:
        conn = self.require(name)
        self._save(conn.config, "enabled", None if enabled else False)
        self._replace(conn, dataclasses.replace(conn.config, enabled=enabled))
        if enabled:
            conn.start()
        else:
            await conn.stop()
            conn.state, conn.error = State.DISABLED, None
        self._changed()
        return f"{conn.name} {'enabled' if enabled else 'disabled'}"

    async def set_exposure(self, name: str, exposure: Exposure) -> str:
        conn = self.require(name)
        self._save(conn.config, "exposure", exposure.value)
        self._replace(conn, dataclasses.replace(conn.config, exposure=exposure))
        self._changed()
        return f"{conn.name}: exposure {exposure.value}"

    async def reconnect(self, name: str) -> str:
        conn = self.require(name)
        await conn.restart()
        await conn.wait_ready(conn.config.timeout)
        return f"{conn.name}: {conn.state.value}" + (f" ({conn.error})" if conn.error else "")

    def require(self, name: str) -> ServerConnection:
        """The server ``name`` names; ``LookupError`` when there is none."""
        conn = self.get(name)
        if conn is None:
            raise LookupError(f"no MCP server named {name!r}")
        return conn

    def _save(self, server: ServerConfig, field: str, value: Any) -> None:
        if server.source in (Source.EXTENSION, Source.CLIENT):
            return  # registered and editor servers change for this run only
        path = Path(server.origin)
        if server.source is Source.PROJECT:  # the person's own edit keeps the project trusted
            root = path.parent.parent  # <project>/.vis/mcp.json
            with self._trust.keeping(root, path.relative_to(root).as_posix()):
                set_field(path, server.name, field, value)
            return
        set_field(path, server.name, field, value)

    # -- tools ----------------------------------------------------------------------------

    def reachable(self) -> list[tuple[ServerConnection, ToolInfo, Exposure]]:
        """Every tool of an enabled server with its effective exposure (not hidden): a
        connected server's, and a dropped one's as last listed (it reconnects on the next
        call)."""
        found = []
        for conn in self.connections():
            if not conn.config.enabled or conn.state not in REACHABLE:
                continue
            for info in conn.tools:
                exposure = conn.config.exposure_of(info.tool)
                if exposure is not Exposure.HIDDEN:
                    found.append((conn, info, exposure))
        return found

    def resource_exposure(self) -> Exposure | None:
        """The widest exposure among enabled, non-hidden servers with resources (connected,
        or dropped: they reconnect on the next call)."""
        exposures = [
            c.config.exposure
            for c in self.connections()
            if c.config.enabled
            and c.state in REACHABLE
            and c.has_resources
            and c.config.exposure is not Exposure.HIDDEN
        ]
        if not exposures:
            return None
        return Exposure.DIRECT if Exposure.DIRECT in exposures else Exposure.CODEMODE

    async def _resource_servers(self) -> list[ServerConnection]:
        await self.wait_all(None)
        return [
            c
            for c in self.connections()
            if c.config.enabled and c.has_resources and c.config.exposure is not Exposure.HIDDEN
        ]

    def host_tools(self, hooks: ToolHooks | None, output_dir: Path) -> list[HostTool]:
        reachable = self.reachable()
        tools: list[HostTool] = []
        if reachable:  # no server connected, nothing of the tools' code to load
            from vis_core.mcp.tools import mcp_host_tool

            tools = [
                mcp_host_tool(lambda key=conn.config.key: self._connections.get(key), info, hooks)
                for conn, info, _ in reachable
            ]
        if self.resource_exposure() is not None:
            from vis_core.mcp.resources import resource_tools

            tools += resource_tools(self._resource_servers, hooks, output_dir / "mcp")
        return tools

    def note_found(self, session_id: str, names: Iterable[str]) -> bool:
        """A search (apropos/doc) found these names: deferred ones are declared from now on.
        Whether one was new."""
        deferred = {i.name for _, i, e in self.reachable() if e is Exposure.DEFERRED}
        loaded = self._loaded.setdefault(session_id, set())
        found = deferred.intersection(names) - loaded
        loaded.update(found)
        return bool(found)

    def found(self, session_id: str) -> set[str]:
        """The deferred tools declared to ``session_id`` by its searches."""
        return set(self._loaded.get(session_id, ()))

    def restore_found(self, session_id: str, names: Iterable[str]) -> None:
        """Deferred tools an earlier run of the session declared (they stay declared)."""
        self._loaded.setdefault(session_id, set()).update(names)

    def direct_specs(
        self, session_id: str, output_dir: Path, show: Callable[[str], None]
    ) -> list[DirectTool]:
        """``session_id``'s direct tools; ``show`` shows a stored image to its model."""
        from vis_core.agent.deps import DirectTool

        loaded = self._loaded.get(session_id, set())
        folder = output_dir / "mcp"

        def present(value: Any) -> str:
            from vis_core.mcp.results import direct_text

            return direct_text(value, folder, show)

        specs = [
            DirectTool(
                ToolDefinition(info.name, _definition_text(conn, info), _schema(info)),
                info.name,
                present,
            )
            for conn, info, exposure in self.reachable()
            if exposure is Exposure.DIRECT
            or (exposure is Exposure.DEFERRED and info.name in loaded)
        ]
        if self.resource_exposure() is Exposure.DIRECT:
            specs += _resource_tools(show)
        return specs

    def namespace_conn(self, name: str) -> ServerConnection | None:
        """The server ``mcp__dev-radius``, ``mcp__dev_radius``, ``dev-radius`` or ``dev_radius``
        names."""
        bare = name.removeprefix(PREFIX)
        wanted = safe(bare)
        named = (c for c in self.connections() if wanted in (safe(c.name), c.config.key))
        return self.get(bare) or next(named, None)

    def namespace_doc(self, name: str) -> str | None:
        """``doc("mcp__<server>")``: the server's description, whole instructions and tool
        names (None: no such server)."""
        conn = self.namespace_conn(name)
        if conn is None:
            return None
        server = conn.config
        state = conn.state.value + (f": {conn.error}" if conn.error else "")
        tools = [i.name for c, i, _ in self.reachable() if c is conn]
        lines = [
            f"{PREFIX}{safe(server.name)}: MCP server {server.name!r} ({state}; exposure "
            f"{server.exposure.value})",
            "",
            f"Description: {_description(conn)}",
            "",
            "Instructions:",
            conn.instructions or "(the server gives none)",
            "",
            f"Tools ({len(tools)}): " + (", ".join(tools) if tools else "(none reachable now)"),
        ]
        if tools:
            lines.append("Read one with doc(name).")
        return "\n".join(lines)

    def described_tools(self, matches: Callable[[str], object]) -> list[str]:
        """Tools of the servers whose description (else the first line of their instructions)
        ``matches`` (tool search ranks a server's tools by it)."""
        return [
            info.name
            for conn, info, _ in self.reachable()
            if conn.summary and matches(conn.summary)
        ]

    def prompt_section(self) -> str:
        """The ``MCP servers`` section: servers with codemode or deferred tools, one line each."""
        lines = []
        for conn in self.connections():
            server = conn.config
            if not server.enabled:
                continue
            exposures = {server.exposure_of(t.tool) for t in conn.tools} or {server.exposure}
            indirect = exposures & {Exposure.CODEMODE, Exposure.DEFERRED}
            if not indirect:
                continue
            how = " and ".join(sorted(e.value for e in indirect))
            gist = conn.summary
            lines.append(f"- `{PREFIX}{safe(server.name)}` ({how})" + (f": {gist}" if gist else ""))
        if not lines:
            return ""
        return (
            "## MCP servers\n"
            "Tools of these MCP servers are async functions in python_execution named "
            "`mcp__<server>__<tool>(**arguments)` that return an McpResult record "
            "(content, structured_content, is_error). List a server's tools with "
            "`apropos('mcp__<server>')` and read one with `doc(name)`; a deferred tool is also "
            "declared to you as a tool once apropos or doc finds it.\n" + "\n".join(lines)
        )


def _description(conn: ServerConnection) -> str:
    if conn.config.description:
        return conn.config.description
    if conn.summary:
        return f"{conn.summary} (the first line of its instructions)"
    return "(none configured)"


def _schema(info: ToolInfo) -> dict[str, Any]:
    schema = dict(info.input_schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _definition_text(conn: ServerConnection, info: ToolInfo) -> str:
    text = info.description or f"The {info.tool!r} tool of MCP server {conn.name!r}."
    return f"{text}\n\n(MCP server {conn.name!r}, tool {info.tool!r})"


def _resource_tools(show: Callable[[str], None]) -> list[DirectTool]:
    from vis_core.agent.deps import DirectTool

    def present(value: Any) -> str:
        if isinstance(value, dict) and "contents" in value:
            parts = []
            for item in value["contents"]:
                if "text" in item:
                    parts.append(str(item["text"]))
                elif "attachment" in item:
                    show(str(item["attachment"]))
                    parts.append(f"[image {item.get('uri')}]")
                elif "path" in item:
                    parts.append(f"[{item.get('mimeType')} saved to {item['path']}]")
            return "\n".join(parts)
        return json.dumps(value, ensure_ascii=False)

    page = {
        "type": "object",
        "properties": {"server": {"type": "string"}, "cursor": {"type": "string"}},
    }
    read = {
        "type": "object",
        "properties": {"server": {"type": "string"}, "uri": {"type": "string"}},
        "required": ["server", "uri"],
    }
    return [
        DirectTool(ToolDefinition(name, text, schema), name, present)
        for name, text, schema in (
            (
                "list_mcp_resources",
                "List MCP resources: {server?, resources: [...], nextCursor?}; with `server` one "
                "page of that server (`cursor` continues), without it every resource.",
                page,
            ),
            (
                "list_mcp_resource_templates",
                "List URI templates for resources the MCP servers do not list directly.",
                page,
            ),
            ("read_mcp_resource", "Read an MCP resource by `server` and `uri`.", read),
        )
    ]


async def wait_settled(conns: Iterable[ServerConnection]) -> None:
    """Wait until each of ``conns`` has connected or failed (up to its timeout + ``SETTLE``)."""
    async with asyncio.TaskGroup() as group:
        for conn in conns:
            group.create_task(conn.wait_ready(conn.config.timeout + SETTLE))


def attention_first(conns: list[ServerConnection]) -> list[ServerConnection]:
    return sorted(conns, key=lambda c: (c.state not in ATTENTION, c.name.lower()))
