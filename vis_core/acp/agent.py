"""The ACP agent: initialize, sessions (new, load, resume, list, close), prompts, cancel,
modes and models, each answered by the same Host and AgentSession ``vis run`` uses."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message_text,
)
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from vis_core.acp.asking import PermissionPresenter
from vis_core.acp.choices import (
    DEFAULT_MODE,
    MODEL_OPTION,
    PLAN_MODE,
    commands,
    model_options,
    modes,
)
from vis_core.acp.content import read_prompt
from vis_core.acp.files import ClientFiles
from vis_core.acp.link import SessionLink
from vis_core.acp.mcp_servers import client_servers
from vis_core.events import AssistantMessage, AssistantThinking, TurnStarted
from vis_core.host_options import HostOptions
from vis_core.model.turn import TurnStatus

log = logging.getLogger(__name__)

STOP_REASONS = {
    TurnStatus.COMPLETED: "end_turn",
    TurnStatus.FAILED: "end_turn",  # the error was said in the answer
    TurnStatus.CANCELLED: "cancelled",
    TurnStatus.MAX_ITERATIONS: "max_turn_requests",
    TurnStatus.INCOMPLETE: "max_tokens",
}
REPLAYED = frozenset(
    {
        "TurnStarted",
        "AssistantMessage",
        "AssistantThinking",
        "IterationStarted",
        "BlockFinished",
        "ActivityStarted",
        "ActivityUpdated",
        "ActivityEnded",
        "UsageReported",
    }
)


class VisAgent:
    """Vis behind the Agent Client Protocol. ``options``: how ``vis acp`` was started (its
    model choice and toggles); each session's ``cwd`` is its workspace, one Host each."""

    def __init__(self, options: HostOptions) -> None:
        self.options = options
        self.connection: Any = None
        self.client = ClientCapabilities()
        self.hosts: dict[Path, Any] = {}
        self.links: dict[str, SessionLink] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        self.connection = conn

    # -- setup ------------------------------------------------------------------------------
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        from vis_core import __version__

        self.client = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    fork=SessionForkCapabilities(),
                ),
            ),
            agent_info=Implementation(name="vis", title="Vis", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # keys live in Vis's own secrets (vis /login, environment)

    async def _host(self, cwd: str) -> Any:
        """The Host of workspace ``cwd``, opened on first use (trust, settings and the jail
        as ``vis`` has them there)."""
        from vis_core.host import Host

        workspace = Path(cwd).resolve()
        if not workspace.is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd} is not a folder"})
        host = self.hosts.get(workspace)
        if host is None:
            host = await Host.open(replace(self.options, workspace=workspace))
            host.interaction.add_presenter(PermissionPresenter(self.connection))
            self.hosts[workspace] = host
            for note in host.startup_notes():
                log.warning("%s", note)
        refusal = host.settings.refusal()
        if refusal is not None:  # fail closed: nothing runs on a value Vis cannot read
            raise RequestError.internal_error({"message": refusal})
        return host

    async def _attach(self, host: Any, session: Any) -> SessionLink:
        if session.model.provider is None:
            await session.close()
            raise RequestError.internal_error({"message": session.model.problem})
        fs = self.client.fs
        if session.tool_context is not None and fs is not None:
            session.tool_context.use_buffers(
                ClientFiles(
                    self.connection,
                    session.id,
                    asyncio.get_running_loop(),
                    read=bool(fs.read_text_file),
                    write=bool(fs.write_text_file),
                )
            )
        link = SessionLink(host, session, self.connection, terminals=bool(self.client.terminal))
        link.stream_thinking()
        self.links[session.id] = link
        return link

    def _announce(self, link: SessionLink) -> None:
        """After the session's answer: its slash commands, and Vis's notes about it."""
        link.send(update_available_commands(commands(link.host)))
        _, jail = link.host.jail_mode(link.session.id)
        notes = [jail, *link.host.startup_notes()]
        if not link.host.trusted:
            notes.append(
                "This project is not trusted: its extensions, MCP servers and environment "
                f"values wait until you run `vis trust {link.host.project_root}`."
            )
        link.send(update_agent_thought_text("\n".join(f"Vis: {n}" for n in notes) + "\n"))

    def _join_servers(self, link: SessionLink, declared: list[Any] | None) -> None:
        """The editor's MCP servers join the session's workspace like its ``mcp.json``
        entries; once each has connected or failed, the editor is told (a bad one fails
        alone, with its reason)."""
        servers, problems = client_servers(declared)
        if not servers and not problems:
            return
        mcp = link.host.mcp
        for problem in problems:
            mcp.manager.add_problem(problem)
        conns = mcp.join(servers)
        task = asyncio.get_running_loop().create_task(self._say_servers(link, conns, problems))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _say_servers(self, link: SessionLink, conns: list[Any], problems: list[Any]) -> None:
        from vis_core.mcp.manager import SETTLE
        from vis_core.mcp.names import PREFIX

        # each up to its own timeout (a slow start is not a failure), as a block naming it waits
        await asyncio.gather(*(c.wait_ready(c.config.timeout + SETTLE) for c in conns))
        lines = []
        for conn in conns:
            state = conn.state.value
            if conn.error:
                lines.append(f"- {conn.name}: {state}: {conn.error}")
            else:
                tools = ", ".join(sorted(info.name for info in conn.tools)) or "no tools"
                lines.append(f"- {conn.name}: {state} · {tools}")
        lines += [f"- {p.server}: skipped: {p.message}" for p in problems]
        head = f"Vis: the editor's MCP servers (the model calls them as {PREFIX}<server>__<tool>):"
        link.send(update_agent_thought_text("\n".join([head, *lines]) + "\n"))

    async def _open(self, cwd: str, session_id: str) -> tuple[Any, Any]:
        from vis_core.store import StoreError

        if session_id in self.links:
            link = self.links[session_id]
            return link.host, link.session
        host = await self._host(cwd)
        try:
            row = host.store.get_session(session_id)
        except StoreError as exc:
            raise RequestError.invalid_params({"sessionId": str(exc)}) from None
        if row is None:
            raise RequestError.resource_not_found(session_id)
        try:
            session = await host.open_session(row.id)
        except LookupError as exc:  # another Vis has it open
            raise RequestError.internal_error({"message": str(exc)}) from None
        return host, session

    # -- sessions ---------------------------------------------------------------------------
    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        host = await self._host(cwd)
        if host.model_problem:  # before a session is stored: say what to set up
            raise RequestError.internal_error({"message": host.model_problem})
        session = await host.new_session()
        link = await self._attach(host, session)
        self._announce(link)
        self._join_servers(link, mcp_servers)
        return NewSessionResponse(
            session_id=session.id,
            modes=modes(session),
            config_options=model_options(host, session),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        host, session = await self._open(cwd, session_id)
        link = self.links.get(session.id) or await self._attach(host, session)
        self._replay(link)
        await link.drain()  # the whole conversation goes before the answer
        self._announce(link)
        self._join_servers(link, mcp_servers)
        return LoadSessionResponse(
            modes=modes(session), config_options=model_options(host, session)
        )

    async def resume_session(
        self, session_id: str, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        host, session = await self._open(cwd, session_id)
        link = self.links.get(session.id) or await self._attach(host, session)
        self._announce(link)
        self._join_servers(link, mcp_servers)
        return ResumeSessionResponse(
            modes=modes(session), config_options=model_options(host, session)
        )

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> ForkSessionResponse:
        """A new session holding ``session_id``'s conversation up to its last settled turn (as
        ``Session.fork`` makes one; the sandbox starts empty). The editor shows the history it
        has, so nothing is replayed."""
        from vis_core.extension_host.session_changes import fork_stored

        host = await self._host(cwd)
        source = host.store.get_session(session_id)
        if source is None:
            raise RequestError.resource_not_found(session_id)
        if Path(source.workspace).resolve() != host.workspace:
            raise RequestError.invalid_params(
                {"cwd": f"session {session_id} belongs to {source.workspace}; fork it there"}
            )
        try:
            row = fork_stored(cast(Any, host), session_id, None, "session/fork")
        except ValueError:  # nothing settled to copy yet: a fresh session in the same folder
            session = await host.new_session()
        else:
            session = await host.open_session(row.id)
        link = await self._attach(host, session)
        self._announce(link)
        self._join_servers(link, mcp_servers)
        return ForkSessionResponse(
            session_id=session.id,
            modes=modes(session),
            config_options=model_options(host, session),
        )

    def _replay(self, link: SessionLink) -> None:
        """The stored conversation as updates: requests, answers, thinking, tool calls."""
        stored = link.host.store.events(link.session.id, types=REPLAYED)
        for row in stored:
            event = row.event
            if isinstance(event, TurnStarted):
                link.send(update_user_message_text(event.request))
            elif isinstance(event, AssistantMessage):
                link.send(update_agent_message_text(event.text))
            elif isinstance(event, AssistantThinking):
                if event.text:
                    link.send(update_agent_thought_text(event.text))
            else:
                link.follow(event)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        from datetime import UTC, datetime

        from vis_core.store import Store

        if cwd is not None:
            store = (await self._host(cwd)).store
            rows = store.list_sessions(Path(cwd).resolve(), limit=200)
        else:
            host = next(iter(self.hosts.values()), None)
            store = host.store if host is not None else None
            if store is None:
                from vis_core.paths import VisPaths

                store = await asyncio.to_thread(Store, VisPaths.from_env().ensure().db_file)
            rows = store.list_sessions(None, limit=200)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=row.id,
                    cwd=row.workspace,
                    title=row.title or None,
                    updated_at=datetime.fromtimestamp(row.modified, UTC).isoformat(),
                )
                for row in rows
                if not row.parent_id  # child sessions (run_session, consult) stay Vis's own
            ]
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        link = self.links.pop(session_id, None)
        if link is not None:
            link.session.cancel()
            await link.drain()
            await link.close()
            await link.session.close()
            if link.session in link.host.sessions:
                link.host.sessions.remove(link.session)
        return CloseSessionResponse()

    def _link(self, session_id: str) -> SessionLink:
        link = self.links.get(session_id)
        if link is None:
            raise RequestError.resource_not_found(session_id)
        return link

    # -- modes and models -------------------------------------------------------------------
    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        link = self._link(session_id)
        if mode_id not in (DEFAULT_MODE, PLAN_MODE):
            raise RequestError.invalid_params(
                {"modeId": f"no mode {mode_id!r}; use default or plan"}
            )
        link.session.plan.set(mode_id == PLAN_MODE)
        link.send(update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        from vis_core.model_choices import use_model

        link = self._link(session_id)
        if config_id != MODEL_OPTION or not isinstance(value, str):
            raise RequestError.invalid_params({"configId": f"no option {config_id!r}; use model"})
        switched = await use_model(link.host, link.session, value)
        if not switched.ok:
            raise RequestError.invalid_params({"value": switched.markdown})
        return SetSessionConfigOptionResponse(config_options=model_options(link.host, link.session))

    # -- prompts ----------------------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        from vis_core.commands.headless import is_command
        from vis_core.model.images import ImageRefused

        link = self._link(session_id)
        session = link.session
        if session.running:
            raise RequestError.invalid_request({"message": "a turn is already running"})
        planning = session.plan.active
        try:
            request = read_prompt(prompt, link.host.workspace)
            text = request.text
            if is_command(text) and not request.images:
                sent = await self._command(link, text)
                if sent is None:
                    return PromptResponse(stop_reason="end_turn")
                text = sent
            ended = await session.submit(text, mentions=request.mentions, images=request.images)
        except ImageRefused as exc:
            raise RequestError.invalid_params({"prompt": str(exc)}) from None
        finally:
            if session.plan.active != planning:  # /plan on, /plan approve
                link.send(update_current_mode(PLAN_MODE if session.plan.active else DEFAULT_MODE))
            await link.drain()
        return PromptResponse(stop_reason=STOP_REASONS[ended.status])  # type: ignore[arg-type]

    async def _command(self, link: SessionLink, text: str) -> str | None:
        """Run the slash command ``text``: the request it sends to the model, else None
        after saying what it answered."""
        from vis_core.commands import CommandAction, PromptToSend
        from vis_core.commands.headless import command_refusal

        host, session = link.host, link.session
        refused = command_refusal(host.commands, text)
        if refused is not None:
            link.send(update_agent_message_text(refused))
            return None
        result = await host.commands.run(session, text)
        prompt = result.data if result.ok and result.action is CommandAction.SEND_PROMPT else None
        if isinstance(prompt, PromptToSend):
            if prompt.model:
                from vis_core.model_choices import use_model

                switched = await use_model(host, session, prompt.model)
                if not switched.ok:
                    link.send(update_agent_message_text(switched.markdown))
                    return None
            return prompt.text
        link.send(update_agent_message_text(result.markdown))
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        link = self.links.get(session_id)
        if link is not None:
            link.session.cancel()

    # -- end --------------------------------------------------------------------------------
    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for link in list(self.links.values()):
            await link.close()
        self.links.clear()
        for host in list(self.hosts.values()):
            await host.close()
        self.hosts.clear()
