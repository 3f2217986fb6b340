"""The session factory: one agent session, its event bus first, then tools, sandbox, loop."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.agent.deps import DirectTool, SessionDeps, TurnLimits
from vis_core.agent.event_bus import ACTIVITY_KINDS, EventBus
from vis_core.agent.hooked_sandbox import HookedSandbox
from vis_core.agent.invoker import CallPosition, ToolInvoker
from vis_core.agent.plan import STATE_KEY as PLAN_STATE
from vis_core.agent.plan import PlanMode
from vis_core.agent.prompt import system_prompt
from vis_core.agent.session import AgentSession
from vis_core.drafts.hooks import DraftHooks
from vis_core.drafts.session import Roots, SessionDrafts
from vis_core.drafts.tools import draft_tools
from vis_core.events import (
    ActivityEnded,
    BlockFinished,
    DraftChanged,
    Event,
    Notification,
    TurnEnded,
)
from vis_core.extension.context import current_call
from vis_core.extension.metadata import build_metadata
from vis_core.extension_host.prompts import active_extensions, extension_prompts
from vis_core.extension_host.session_kit import SessionKit
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import WorkerPlace
from vis_core.instructions.session import PATH_TOOLS, SessionInstructions
from vis_core.model.channel import Channel
from vis_core.model.draft import Draft, DraftAction
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import BLOCK_CANCELLED
from vis_core.session_tools import SessionTools, ToolSet
from vis_core.skills.session import SessionSkills, skill_file_tool
from vis_core.system.loops import keep
from vis_core.tools.checkpoints import Checkpoints
from vis_core.tools.registry import HostTool, ToolRegistry

if TYPE_CHECKING:
    from vis_core.drafts import Drafts
    from vis_core.extension_host.runtime import HostRuntime
    from vis_core.host.extensions import ExtensionCatalog
    from vis_core.host.models import ModelResolver
    from vis_core.host.sessions import SessionRegistry
    from vis_core.host.workspace import Workspace
    from vis_core.host_options import HostOptions
    from vis_core.interaction import Interaction
    from vis_core.mcp.host import HostMcp
    from vis_core.paths import VisPaths
    from vis_core.settings import SettingsService
    from vis_core.store import Store
    from vis_core.subagents import Subagents
    from vis_core.tools import ToolContext

SANDBOX_IDLE_TIMEOUT = 15 * 60  # seconds; an idle sandbox frees its process, restored later
CONTROL_CHECK_SECONDS = 1.0  # after a tool call, the control files are checked at most this often


@dataclass
class SessionFactory:
    """Builds the agent sessions of one workspace from the services they run on;
    ``direct_tools``: the tools declared to the model directly in every session."""

    options: HostOptions
    paths: VisPaths
    store: Store
    workspace: Workspace
    settings: SettingsService
    catalog: ExtensionCatalog
    models: ModelResolver
    registry: SessionRegistry
    mcp: HostMcp
    subagents: Subagents
    interaction: Interaction
    drafts: Drafts
    runtime: HostRuntime
    direct_tools: list[DirectTool]
    build_info: dict[str, str | None] = field(default_factory=build_metadata)

    def setting(self, setting_id: str, default: Any, session_id: str) -> Any:
        return self.settings.get(setting_id, default, session_id)

    def build(self, session_id: str, title: str, history: list[Event]) -> AgentSession:
        """The agent session ``session_id``, with ``history`` replayed.

        The event bus comes first: the invoker and the session emit on it, so an event emitted
        while the session is still being put together is stored and reaches the subscribers like
        any other. The session's tool calls happen at the :class:`CallPosition` the session owns
        and its invoker reads; the invoker finds the session of a call among the registry's open
        sessions (by id), not in a cell filled later.
        """
        from vis_core.context.service import SessionContext
        from vis_core.sandbox import Sandbox
        from vis_core.tools.background import background_reports, redraw_on_exit

        bus = EventBus(self.store)
        position = CallPosition()
        kit_cell: list[SessionKit] = []
        drafts = SessionDrafts(
            self.drafts,
            session_id,
            self.workspace.root,
            self.workspace.project_root,
            hooks=lambda: DraftHooks(kit_cell[0].hooks.before, kit_cell[0].hooks.after),
            announce=_announcer(session_id, bus),
        )
        roots = drafts.roots()  # the draft's, when the session resumes in one
        place = WorkerPlace(
            session_id, roots.workspace, roots.project_root, self.options.channel, self.runtime
        )
        kit = SessionKit(
            place,
            store=self.store,
            extensions=self.catalog.current,
            project_values=self.workspace.project_values(),
            runtime=self.runtime,
        )
        kit_cell.append(kit)
        jail, refusal = self.workspace.jail_policy(session_id)
        values = self.workspace.project_values()
        limits = self.workspace.child_limits(session_id)
        tool_context = self._tool_context(session_id, kit, jail, refusal, values, limits, roots)
        instructions = SessionInstructions(
            self.paths.config_dir, self.workspace.project_root, self.workspace.root
        )
        instructions.remember_noted(e.stdout for e in history if isinstance(e, BlockFinished))
        skills = SessionSkills(
            self.paths.config_dir, self.workspace.project_root, lambda: self.workspace.trusted
        )
        tools = SessionTools(
            partial(self._build_tools, session_id, kit, tool_context, skills, drafts, bus),
            _contract,
        )
        worker = kit.worker
        self.registry.keep_parts(session_id, worker, tools)
        plan = self._plan_mode(session_id)
        invoker = ToolInvoker(
            session_id=session_id,
            registry=tools.registry,
            emit=bus.emit,
            workspace=roots.workspace,
            project_root=roots.project_root,
            channel=self.options.channel,
            locks=self.catalog.lock,
            prepare_arguments=partial(_prepare_arguments, instructions),
            runtime=self.runtime,
            session=lambda: self.registry.live_session(session_id),
            worker=worker,
            position=position,
            call_state=kit.call_state,
            plan=plan,
        )
        network = self._network_proxy(session_id, kit, bus)
        tool_context.shells.network = network.start  # jailed shell commands: the same proxy
        sandbox = Sandbox(
            workspace=roots.workspace,
            call_tool=partial(invoker.call, encoded=True),  # a worker's packed result as is
            call_handle=invoker.call_handle,
            tools=tools.sandbox_entries,
            snapshot_save=lambda data: self.store.save_sandbox_snapshot(session_id, data),
            snapshot_load=lambda: self.store.load_sandbox_snapshot(session_id),
            jail=jail,
            idle_timeout=SANDBOX_IDLE_TIMEOUT,
            output_dir=tool_context.output_dir,
            environment=values,
            project_root=roots.project_root,
            refusal=refusal,
            limits=limits,
            time_limit=float(self.setting("block_time_limit", "1800", session_id)),
            home_writable=tool_context.home_writable,
            read_only=plan.active or self.subagents.is_read_only(session_id),
            network=network.start,
            draft_slot=drafts.slot,
        )
        plan.follow(sandbox.set_read_only)
        hooked = HookedSandbox(
            sandbox,
            kit.hooks,
            session=lambda: kit.session_globals(self.registry.live_session(session_id)),
        )
        hooks = _SessionHooks(
            self.settings,
            self.mcp,
            session_id,
            prompt=self._prompt(session_id, tools, kit, instructions, skills),
            direct_tools=lambda: [
                *self.direct_tools,
                *self.mcp.direct_tools(session_id, tool_context.output_dir, kit.call_state.show),
            ],
            instructions=instructions,
            skills=skills,
            before_request=partial(background_reports, tool_context.shells, session_id),
            close=self._closer(
                session_id, _closing(tool_context.close, network.close), worker, tools, drafts
            ),
        )
        deps = SessionDeps(
            store=self.store,
            events=bus,
            model=self.models.model_of_session(session_id),
            sandbox=self.mcp.wrap_sandbox(hooked),
            invoker=invoker,
            hooks=hooks,
            position=position,
            limits=TurnLimits(max_iterations=int(self.setting("max_iterations", 50, session_id))),
            context=SessionContext(),
            checkpoints=Checkpoints(
                roots.workspace, self.paths.data_dir / "checkpoints" / session_id
            ),
            instructions=instructions,
            plan=plan,
            drafts=drafts,
            tool_context=tool_context,
        )
        session = AgentSession(deps, session_id=session_id, title=title, history=history)
        _follow_drafts(drafts, kit, tool_context, invoker, sandbox, session)
        bus.subscribe(_leave_running(tool_context.shells), kinds=(BlockFinished,))
        bus.subscribe(_end_strays(sandbox), kinds=(TurnEnded,))
        redraw = redraw_on_exit(tool_context.shells, session_id, bus.emit, bus.flush)
        bus.subscribe(redraw, early=True, kinds=ACTIVITY_KINDS)
        bus.subscribe(
            self._control_file_watch(session_id, bus),
            kinds=(ActivityEnded, BlockFinished, TurnEnded),
        )
        return session

    def _plan_mode(self, session_id: str) -> PlanMode:
        """The session's plan mode, as it was kept with the session (a resume still plans)."""

        def save(active: bool) -> None:
            self.store.state_set(PLAN_STATE, session_id, True if active else None)

        return PlanMode(bool(self.store.state_get(PLAN_STATE, session_id)), save)

    def _tool_context(
        self,
        session_id: str,
        kit: SessionKit,
        jail: bool,
        refusal: str | None,
        values: dict[str, str],
        limits: Any,
        roots: Roots,
    ) -> ToolContext:
        from vis_core.system.shell import ShellManager
        from vis_core.tools import ToolContext

        home_writable = self.setting("jail_home_writable", False, session_id) is True
        return ToolContext(
            workspace=roots.workspace,
            session_id=session_id,
            output_dir=self.paths.data_dir / "outputs" / session_id,
            jail=jail,
            hooks=kit.tool_hooks,
            time_limit=float(self.setting("block_time_limit", "1800", session_id)),
            home_writable=home_writable,
            shells=ShellManager(
                environment=values,
                project_root=roots.project_root,
                refusal=refusal,
                limits=limits,
                home_writable=home_writable,
            ),
        )

    def _build_tools(
        self,
        session_id: str,
        kit: SessionKit,
        tool_context: ToolContext,
        skills: SessionSkills,
        drafts: SessionDrafts,
        bus: EventBus,
        tools: SessionTools,
    ) -> ToolSet:
        """Every tool of the session now: built-ins, discovery, extensions', MCP servers'."""
        from vis_core.context.fold_tool import fold_tools
        from vis_core.extension_host.attachments import attachment_tools
        from vis_core.extension_host.guides import extension_guides
        from vis_core.tools import builtin_tools
        from vis_core.tools.discovery import discovery_tools

        builtins = [
            *builtin_tools(tool_context),
            *attachment_tools(tool_context),
            *fold_tools(),
            skill_file_tool(skills),
            *draft_tools(drafts, self._approver(session_id)),
        ]
        discovery: list[HostTool] = []
        if self.setting("introspection", True, session_id):
            from vis_core.tools.sessions import session_tools

            found = partial(self.mcp.note_found, session_id)
            discovery = [
                *discovery_tools(
                    tools.registry,
                    lambda: [*tools.guides(), *skills.guides()],
                    found,
                    described=self.mcp.described_tools,
                    namespace_doc=self.mcp.namespace_doc,
                ),
                *session_tools(self.store, session_id, self._sessions_scope(session_id)),
            ]
        mcp_tools = self.mcp.host_tools(kit.tool_hooks, tool_context.output_dir)
        from vis_core.subagents.tools import read_only_registry, subagent_tools

        children = subagent_tools(self.subagents, self._sessions_scope(session_id))
        if not discovery:  # introspection off: consult() reads stored sessions, as read_session
            children = [tool for tool in children if tool.name != "consult"]
        registry = ToolRegistry(
            [*builtins, *discovery, *children, *self.catalog.tools(), *mcp_tools]
        )
        if self.subagents.is_read_only(session_id):  # a read-only child session
            registry = read_only_registry(registry)
        return ToolSet(registry, extension_guides(self.catalog.loaded))

    def _sessions_scope(self, session_id: str) -> str | None:
        """The workspace whose sessions the model's session tools reach (``None``: every one,
        when the person set ``sessions_scope = "all"``)."""
        if self.setting("sessions_scope", "workspace", session_id) == "all":
            return None
        own = self.store.get_session(session_id)
        return own.workspace if own is not None else str(self.workspace.root)

    def _prompt(
        self,
        session_id: str,
        tools: SessionTools,
        kit: SessionKit,
        instructions: SessionInstructions,
        skills: SessionSkills,
    ) -> Callable[[], str]:
        """The system prompt before each request; it also hides the tools of the extensions
        whose ``activation`` says no for this request (activation and prompt callbacks run in
        the session's extension worker)."""
        mcp_prompt = self.mcp.prompt_for_session(session_id)

        def prompt() -> str:
            place = kit.place  # the draft's roots while the session is in one
            env = {
                "cwd": str(place.workspace_root),
                "workspace_root": str(place.workspace_root),
                "project_root": str(place.project_root),
                "session_id": session_id,
                "channel": self.options.channel.value,
            }
            context_for = kit.contexts.context_for
            active = active_extensions(self.catalog.loaded, env, kit.worker, context_for)
            names = {ext.name for ext in active}
            tools.narrow(
                frozenset(e.name for e in self.catalog.loaded.enabled if e.name not in names)
            )
            text = system_prompt(
                tools=tools.registry(),
                workspace=place.workspace_root,
                project_root=place.project_root,
                build=self.build_info,
                extension_prompts=extension_prompts(
                    self.catalog.loaded, env, active, kit.worker, context_for
                ),
                instructions=instructions.section(),
                skills=skills.section(),
            )
            text += mcp_prompt()
            goal = self.store.state_get("vis.goal", session_id)
            return text + (f"\n\n## Goal of this session\n{goal}" if goal else "")

        return prompt

    def _network_proxy(self, session_id: str, kit: SessionKit, bus: EventBus) -> Any:
        """The proxy that is the jailed sandbox's only network: the extensions' network filters,
        then the ``network_allowed_hosts`` setting, decide each request."""
        from vis_core.extension_host.network_filters import FilterPolicy
        from vis_core.sandbox.network_proxy import NetworkProxy

        policy = FilterPolicy(
            self.catalog.current,
            lambda: kit.worker,
            lambda: str(self.setting("network_allowed_hosts", "", session_id) or ""),
            kit.contexts.context_for,
        )

        told: set[tuple[str, str]] = set()

        async def refused(request: Any, reason: str) -> None:  # the person sees it too, once
            what = request.url if request is not None else "a request"
            logging.getLogger(__name__).info("the jail's network refused %s: %s", what, reason)
            where = f"{request.host}:{request.port}" if request is not None else ""
            if (where, reason) in told or len(told) >= 100:
                return
            told.add((where, reason))
            text = f"Network request refused: {what[:200]}: {reason}"
            await bus.emit(Notification(session_id, text=text, kind=NotifyKind.WARN))

        return NetworkProxy(policy, on_refused=refused)

    def _closer(
        self,
        session_id: str,
        close: Callable[[], Any],
        worker: SessionWorkers,
        tools: SessionTools,
        drafts: SessionDrafts,
    ) -> Callable[[], Any]:
        async def run() -> None:
            try:
                await close()
            finally:
                await asyncio.to_thread(worker.stop)
                self.registry.drop_parts(session_id, worker, tools)
                drafts.release_slot()

        return run

    def _control_file_watch(self, session_id: str, bus: EventBus) -> Callable[[Event], None]:
        """After each block and turn, and after tool calls at most every
        ``CONTROL_CHECK_SECONDS``, tell the person once when the trusted project's control files
        changed (the project needs `vis trust` again at the next start). Checking hashes every
        control file: after each of a thousand calls of one block it would cost more than they do.
        """
        next_check = 0.0
        notices: set[asyncio.Task[None]] = set()  # the notices emitted, until they are

        def watch(event: Event) -> None:
            nonlocal next_check
            if isinstance(event, ActivityEnded):
                if time.monotonic() < next_check:
                    return  # checked a moment ago; the block's end checks again
            elif not isinstance(event, BlockFinished | TurnEnded):
                return
            next_check = time.monotonic() + CONTROL_CHECK_SECONDS
            for text in (
                self.workspace.control_files_notice(),
                self.workspace.new_control_notice(),
            ):
                if text is not None:
                    notice = Notification(session_id, text=text, kind=NotifyKind.WARN)
                    keep(notices, asyncio.ensure_future(bus.emit(notice)))

        return watch

    def _approver(self, session_id: str) -> Any:
        """Whether the model's ``draft_approve()`` may go on: the person's answer to a form with
        the files and the diff summary, unless setting ``draft_model_approves`` lets the model
        approve alone; ``vis run`` refuses unless ``--allow-approve`` was given."""

        async def approve(draft: Draft, files: list[str], diff: str) -> str | None:
            if self.options.allow_approve or self.setting(MODEL_APPROVES, False, session_id):
                return None
            if self.options.channel is Channel.CLI:
                return (
                    f"vis run does not approve drafts unless --allow-approve is given; draft "
                    f"{draft.label} stays for the person (`vis drafts approve {draft.label}`)"
                )
            from vis_core.extension.forms import Form, paragraph

            listed = "\n".join(f"- {name}" for name in files[:50]) or "(no file differs)"
            stat = "\n".join(line for line in diff.splitlines() if "|" in line)[:4000]
            form = Form(
                f"Approve draft {draft.label}?",
                (
                    paragraph(
                        f"The model asks to merge draft {draft.label} into "
                        f"{draft.target_branch or draft.workspace}. {len(files)} file(s):"
                    ),
                    paragraph(listed),
                    *((paragraph(stat),) if stat else ()),
                ),
                submit_label="Approve",
                cancel_label="Keep the draft",
            )
            answer = await self.interaction.ask_async(form, session_id, "vis")
            if answer:
                return None
            reason = answer.reason.value if answer.reason else "cancelled"
            return (
                f"the person did not approve draft {draft.label} ({reason}); it stays as it is. "
                "Ask the person what to change, or let them approve it with /draft"
            )

        return approve


def _follow_drafts(
    drafts: SessionDrafts,
    kit: SessionKit,
    tool_context: ToolContext,
    invoker: ToolInvoker,
    sandbox: Any,
    session: AgentSession,
) -> None:
    """Everything that acts on "the workspace" moves with the session into and out of its
    draft: extension callbacks and workers, host tools and shells, the invoker's call
    contexts, the sandbox's child (from its next block) and the /undo checkpoints. Entering a
    draft stops the commands still running in the live workspace, so that nothing the
    session started writes there any more."""

    def move(workspace: Path, project_root: Path) -> None:
        kit.move_to(workspace, project_root)
        live = drafts.live.workspace
        tool_context.move_to(workspace, None if workspace == live else live)
        tool_context.shells.project_root = project_root
        invoker.move_to(workspace, project_root)
        sandbox.move_to(workspace, project_root)
        if session.checkpoints is not None:
            session.checkpoints.move_to(workspace)
        session.moved()

    async def stop_live_commands(_old_root: Path, _new_root: Path) -> None:
        await tool_context.shells.stop_running()  # each started in the live workspace

    drafts.add_mover(move)
    drafts.add_follower(sandbox.follow_now)  # the rest of a running block: the draft only
    drafts.add_follower(stop_live_commands)


def _closing(*closers: Callable[[], Any]) -> Callable[[], Any]:
    async def run() -> None:
        try:
            await closers[0]()
        finally:
            for close in closers[1:]:
                await close()

    return run


class SettingsUnreadable(Exception):
    """A setting that decides what a block may do cannot be read: the turn stops."""


class _SessionHooks:
    """What the session asks of its assembly around its turns and requests."""

    def __init__(
        self,
        settings: SettingsService,
        mcp: HostMcp,
        session_id: str,
        *,
        prompt: Callable[[], str],
        direct_tools: Callable[[], Sequence[DirectTool]],
        instructions: SessionInstructions,
        skills: SessionSkills,
        before_request: Callable[[str], Awaitable[Sequence[Event]]],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self._settings = settings
        self._mcp = mcp
        self._session_id = session_id
        self.system_prompt = prompt
        self.direct_tools = direct_tools
        self._instructions = instructions
        self._skills = skills
        self._before_request = before_request
        self._close = close

    async def before_request(self, turn_id: str) -> Sequence[Event]:
        return await self._before_request(turn_id)

    async def close(self) -> None:
        await self._close()

    async def before_turn(self, session: AgentSession) -> None:
        """Stop the turn, naming the value, when a setting that bounds what a block may do
        (or a ``--toggles`` entry) cannot be read (fail closed); else read the instruction
        files and skills again (never between a turn's requests, so its system prompt stays
        the same) and let MCP catch up."""
        problem = self._settings.refusal(self._session_id)
        if problem is not None:
            raise SettingsUnreadable(problem)
        if session.drafts is not None:
            await session.drafts.refresh()
        await asyncio.to_thread(self._instructions.refresh)
        await asyncio.to_thread(self._skills.refresh)
        await self._mcp.before_turn(session)


def _end_strays(sandbox: Any) -> Callable[[Event], None]:
    """At the turn's end, the processes its blocks started outside ``shell()`` (a
    ``subprocess`` child, a double fork) are killed; the sandbox's namespace stays."""

    def watch(event: Event) -> None:
        if isinstance(event, TurnEnded):
            sandbox.end_strays()

    return watch


def _leave_running(shells: Any) -> Callable[[Event], None]:
    """After each block, the session's commands still running report back when they end;
    after a cancelled block, those it started are stopped instead (Esc stops what it began)."""
    stopping: set[asyncio.Task[None]] = set()

    def watch(event: Event) -> None:
        if not isinstance(event, BlockFinished):
            return
        if event.error == BLOCK_CANCELLED:
            task = asyncio.ensure_future(shells.stop_unleft())
            stopping.add(task)
            task.add_done_callback(stopping.discard)
        else:
            shells.leave_running()

    return watch


def _prepare_arguments(
    instructions: SessionInstructions, tool: HostTool, args: tuple, kwargs: dict
) -> tuple[tuple, dict]:
    """Records coming back from the sandbox become the tool's own dataclasses again; a
    built-in's path tells ``instructions`` where the model works (nested instruction files)."""
    from vis_core.records import coerce_arguments

    if tool.owner == "vis" and tool.name in PATH_TOOLS and tool.spec is None:
        instructions.touch(tool.name, args[0] if args else kwargs.get("path", "."))
    if (not args and not kwargs) or tool.spec is not None:
        return args, kwargs  # an extension's tool: its worker rebuilds them
    return coerce_arguments(tool.fn, args, kwargs, owner=tool.owner)


def _contract(tool: HostTool) -> dict[str, Any] | None:
    try:
        from vis_core.extension_host.symbol_tools import tool_contract
    except ImportError:
        return None
    try:
        return tool_contract(tool)
    except Exception:  # a tool without a readable contract still runs
        return None


def _announcer(session_id: str, bus: EventBus) -> Any:
    """Emit :class:`DraftChanged`: the transcript's mark and the status bar's draft."""

    async def announce(action: DraftAction, draft: Draft, files: int, text: str) -> None:
        call = current_call()  # a tool call of a turn: the mark goes there
        await bus.emit(
            DraftChanged(
                session_id,
                turn_id=(call.turn_id or "") if call is not None else "",
                action=action,
                label=draft.label,
                backend=str(draft.backend),
                root=draft.root,
                files=files,
                text=text,
            )
        )

    return announce


MODEL_APPROVES = "draft_model_approves"  # vis_core/settings/core.py
