"""The ACP agent: initialize, sessions (new, load, resume, list, close), prompts, cancel,
modes and models, each answered through the façade the TUI drives (one per workspace)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    AuthenticateResponse,
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
from vis_core.acp.auth import auth_methods, check_method, model_required
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
from vis_core.acp.markdown import literal, literal_line
from vis_core.acp.mcp_servers import client_servers
from vis_core.events import AssistantMessage, AssistantThinking, TurnStarted
from vis_core.model.turn import TurnStatus

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from vis_core.frontend import Frontend, HostOptions, McpServerView, Session
    from vis_core.model.sessions import SessionRow

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
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
    model choice and toggles); each session's ``cwd`` is its workspace, one core each."""

    def __init__(self, options: HostOptions) -> None:
        self.options = options
        self.connection: Any = None
        self.client = ClientCapabilities()
        self.cores: dict[Path, Frontend] = {}
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
            auth_methods=auth_methods(),
            agent_info=Implementation(name="vis", title="Vis", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """The person says they gave Vis a model (see :mod:`vis_core.acp.auth`): the editor
        asks for its session again, which reads ``config.toml`` and the saved keys again
        and says so when a model is still missing."""
        check_method(method_id)
        return AuthenticateResponse()

    async def _core(self, cwd: str) -> Frontend:
        """The core of workspace ``cwd``, opened on first use (trust, settings and the jail
        as ``vis`` has them there)."""
        from vis_core.frontend import Frontend

        workspace = Path(cwd).resolve()
        if not workspace.is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd} is not a folder"})
        core = self.cores.get(workspace)
        if core is None:
            core = await Frontend.open(replace(self.options, workspace=workspace))
            core.present_forms(PermissionPresenter(self.connection))
            self.cores[workspace] = core
            for note in core.startup_notes():
                log.warning("%s", note)
        refusal = core.settings_problem()
        if refusal is not None:  # fail closed: nothing runs on a value Vis cannot read
            raise RequestError.internal_error({"message": refusal})
        return core

    async def _attach(self, core: Frontend, session: Session) -> SessionLink:
        """``session`` linked to the editor; one without a model too (a stored one replays
        and forks; its prompts ask for a model)."""
        session.model.prepare()  # else the first prompt, and every session, waits for the SDK
        fs = self.client.fs
        if fs is not None:
            core.use_editor_files(
                session,
                ClientFiles(
                    self.connection,
                    session.id,
                    asyncio.get_running_loop(),
                    read=bool(fs.read_text_file),
                    write=bool(fs.write_text_file),
                ),
            )
        link = SessionLink(core, session, self.connection, terminals=bool(self.client.terminal))
        link.stream_thinking()
        self.links[session.id] = link
        return link

    def _announce(self, link: SessionLink) -> None:
        """After the session's answer: its slash commands, and Vis's notes about it, the
        extensions that failed to load among them (as text: a note names a checkout's files,
        which Markdown must not turn into links)."""
        core = link.core
        link.send(update_available_commands(commands(core)))
        _, jail = core.jail_mode(link.session.id)
        # the extensions that did not load, as `vis run` says, with what loads them again here
        failed = core.extension_warning("restart the Vis agent in the editor")
        # one of the notes says what an untrusted project skipped
        notes = [jail, *core.startup_notes(), *([failed] if failed else [])]
        said = "\n".join(f"Vis: {n}" for n in notes)
        link.send(update_agent_thought_text(literal(said) + "\n"))

    def _join_servers(self, link: SessionLink, declared: list[Any] | None) -> None:
        """The editor's MCP servers join the session's workspace like its ``mcp.json``
        entries; once each has connected or failed, the editor is told (a bad one fails
        alone, with its reason)."""
        servers, problems = client_servers(declared)
        if not servers and not problems:
            return
        joined = link.core.join_mcp_servers(servers, problems)
        task = asyncio.get_running_loop().create_task(self._say_servers(link, joined, problems))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _say_servers(
        self,
        link: SessionLink,
        joined: Coroutine[Any, Any, list[McpServerView]],
        problems: list[Any],
    ) -> None:
        from vis_core.frontend import MCP_TOOL_PREFIX as PREFIX

        lines = []
        for conn in await joined:  # each once it has connected or failed
            state = conn.state.value
            if conn.error:
                lines.append(f"{conn.name}: {state}: {conn.error}")
            else:
                tools = ", ".join(sorted(name for name, _ in conn.tools)) or "no tools"
                lines.append(f"{conn.name}: {state} · {tools}")
        lines += [f"{p.server}: skipped: {p.message}" for p in problems]
        head = f"Vis: the editor's MCP servers (the model calls them as {PREFIX}<server>__<tool>):"
        # names, tools and errors come from the servers: text, one line each
        said = [literal(head), *(f"- {literal_line(line)}" for line in lines)]
        link.send(update_agent_thought_text("\n".join(said) + "\n"))

    async def _open(self, cwd: str, session_id: str) -> tuple[Frontend, Session]:
        if session_id in self.links:
            link = self.links[session_id]
            return link.core, link.session
        core = await self._core(cwd)
        row = _stored(core, session_id, "give that as cwd")
        try:
            session = await core.open_session(row.id)
        except LookupError as exc:  # another Vis has it open
            raise RequestError.internal_error({"message": str(exc)}) from None
        return core, session

    async def _started(self, core: Frontend, session: Session, mcp_servers: Any) -> SessionLink:
        """``session`` linked to the editor (once), its commands and notes said, the editor's
        MCP servers joining."""
        link = self.links.get(session.id) or await self._attach(core, session)
        self._announce(link)
        self._join_servers(link, mcp_servers)
        return link

    # -- sessions ---------------------------------------------------------------------------
    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        core = await self._core(cwd)
        core.reread_config()  # a model set up since (the editor asks again after authenticate)
        if core.model_problem:  # before a session is stored: say what to set up
            raise model_required(core.model_problem)
        session = await core.new_session()
        if session.model.provider is None:  # its provider cannot start (no key)
            await core.close_session(session)
            raise model_required(session.model.problem)
        await self._started(core, session, mcp_servers)
        return NewSessionResponse(
            session_id=session.id,
            modes=modes(session),
            config_options=model_options(core, session),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        core, session = await self._open(cwd, session_id)
        link = self.links.get(session.id) or await self._attach(core, session)
        self._replay(link)
        await link.drain()  # the whole conversation goes before the answer
        await self._started(core, session, mcp_servers)
        return LoadSessionResponse(
            modes=modes(session), config_options=model_options(core, session)
        )

    async def resume_session(
        self, session_id: str, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        core, session = await self._open(cwd, session_id)
        await self._started(core, session, mcp_servers)
        return ResumeSessionResponse(
            modes=modes(session), config_options=model_options(core, session)
        )

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> ForkSessionResponse:
        """A new session holding ``session_id``'s conversation up to its last settled turn (as
        ``Session.fork`` makes one; the sandbox starts empty). The editor shows the history it
        has, so nothing is replayed."""
        core = await self._core(cwd)
        source = _stored(core, session_id, "fork it there")
        forked = await core.fork_session(source.id, "session/fork")
        # nothing settled to copy yet: a fresh session in the same folder
        session = await (core.new_session() if forked is None else core.open_session(forked))
        await self._started(core, session, mcp_servers)
        return ForkSessionResponse(
            session_id=session.id,
            modes=modes(session),
            config_options=model_options(core, session),
        )

    def _replay(self, link: SessionLink) -> None:
        """The stored conversation as updates: requests, answers, thinking, tool calls."""
        stored = link.core.history.events(link.session.id, types=REPLAYED)
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

        from vis_core.frontend import stored_sessions

        if cwd is not None:
            rows = (await self._core(cwd)).stored_sessions(Path(cwd).resolve(), limit=200)
        elif self.cores:
            rows = next(iter(self.cores.values())).stored_sessions(None, limit=200)
        else:
            rows = await stored_sessions(limit=200)
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
            await link.core.close_session(link.session)
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
        link = self._link(session_id)
        if config_id != MODEL_OPTION or not isinstance(value, str):
            raise RequestError.invalid_params({"configId": f"no option {config_id!r}; use model"})
        switched = await link.core.use_model(link.session, value)
        if not switched.ok:
            raise RequestError.invalid_params({"value": switched.markdown})
        return SetSessionConfigOptionResponse(config_options=model_options(link.core, link.session))

    # -- prompts ----------------------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        from vis_core.frontend import is_command
        from vis_core.model.images import ImageRefused

        link = self._link(session_id)
        session = link.session
        if session.running:
            raise RequestError.invalid_request({"message": "a turn is already running"})
        planning = session.plan.active
        try:
            request = read_prompt(prompt, link.core.workspace)
            text = request.text
            if is_command(text) and not request.images:
                sent = await self._command(link, text)
                if sent is None:
                    return PromptResponse(stop_reason="end_turn")
                text = sent
            if session.model.provider is None:  # a stored session opened without one
                await link.core.resolve_model_again(session)
                if session.model.provider is None:
                    raise model_required(session.model.problem)
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
        from vis_core.frontend import CommandAction, PromptToSend

        core, session = link.core, link.session
        refused = core.command_refusal(text)
        if refused is not None:  # names a checkout's extensions: as text
            link.send(update_agent_message_text(literal(refused)))
            return None
        result = await core.run_command(session, text)
        prompt = result.data if result.ok and result.action is CommandAction.SEND_PROMPT else None
        if isinstance(prompt, PromptToSend):
            if prompt.model:
                switched = await core.use_model(session, prompt.model)
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
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for link in list(self.links.values()):
            await link.close()
        self.links.clear()
        for core in list(self.cores.values()):
            await core.close()
        self.cores.clear()


def _stored(core: Frontend, session_id: str, elsewhere: str) -> SessionRow:
    """The stored session of ``core``'s workspace whose whole id is ``session_id``, or the
    editor's error (``elsewhere``: what to do when it is another workspace's session: its turns
    run in its own folder). Not a prefix (the command line's shorthand): the editor goes on
    with the id it gave, and Vis's updates would come under another."""
    try:
        row = core.stored_session(session_id, exact=True)
    except ValueError as exc:
        raise RequestError.invalid_params({"sessionId": str(exc)}) from None
    if row is None:
        raise RequestError(
            RESOURCE_NOT_FOUND,
            f"Vis has no session {session_id!r}: give a session's whole id, as session/new "
            "and session/list answer it",
            {"uri": session_id},
        )
    if Path(row.workspace).resolve() != core.workspace:
        raise RequestError.invalid_params(
            {"cwd": f"session {session_id} belongs to {row.workspace}; {elsewhere}"}
        )
    return row
