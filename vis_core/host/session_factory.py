"""The session factory: one agent session, its event bus first, then tools, sandbox, loop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from vis_core.agent.deps import SessionDeps, TurnLimits
from vis_core.agent.direct_pairing import DirectPairing
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
    BackgroundCommandEnded,
    BackgroundFilesChanged,
    BlockFinished,
    Event,
    Notification,
    TurnEnded,
    TurnStarted,
)
from vis_core.extension.metadata import build_metadata
from vis_core.extension_host.prompts import active_among, extension_prompts
from vis_core.extension_host.session_kit import SessionKit
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import WorkerPlace
from vis_core.host.live_settings import ConfinedParts, block_time_limit, max_iterations
from vis_core.host.session_parts import (
    AssemblyHooks,
    DraftApproval,
    after_git_look,
    announcer,
    closing,
    control_file_watch,
    draft_git_watch,
    end_strays,
    follow_drafts,
    leave_running,
    prepare_arguments,
    tool_contract_of,
)
from vis_core.instructions.session import SessionInstructions
from vis_core.model.notify import NotifyKind
from vis_core.session_tools import SessionTools, ToolSet
from vis_core.skills.session import SessionSkills, skill_file_tool
from vis_core.system.loops import end_tasks, running_loop
from vis_core.tools.checkpoints import Checkpoints
from vis_core.tools.registry import HostTool, ToolRegistry

if TYPE_CHECKING:
    from vis_core.drafts import Drafts
    from vis_core.host.extensions import ExtensionCatalog
    from vis_core.host.models import ModelResolver
    from vis_core.host.sessions import SessionRegistry
    from vis_core.host.workspace import Confinement, Workspace
    from vis_core.mcp.host import HostMcp
    from vis_core.settings.service import SettingsService
    from vis_core.store import Store
    from vis_core.subagents import Subagents
    from vis_core.tools import ToolContext

SANDBOX_IDLE_TIMEOUT = 15 * 60  # seconds; an idle sandbox frees its process, restored later


@dataclass
class SessionFactory:
    """Builds the agent sessions of one workspace from the services they run on; ``place``:
    where the host's extension workers run (each session's: its id and roots there)."""

    store: Store
    workspace: Workspace
    settings: SettingsService
    catalog: ExtensionCatalog
    models: ModelResolver
    registry: SessionRegistry
    mcp: HostMcp
    subagents: Subagents
    drafts: Drafts
    approval: DraftApproval
    place: WorkerPlace
    build_info: dict[str, str | None] = field(default_factory=build_metadata)

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
        from vis_core.tools.background import background_reports, follow_exits

        bus = EventBus(self.store)
        position = CallPosition()
        drafts = SessionDrafts(
            self.drafts,
            session_id,
            self.workspace.root,
            self.workspace.project_root,
            announce=announcer(session_id, bus),
            git_on_host=lambda: self.workspace.git_on_host(session_id),
        )
        roots = drafts.roots()  # the draft's, when the session resumes in one
        # a session restored in a thread: its workers answer on the host's loop
        place = replace(
            self.place,
            session_id=session_id,
            workspace_root=roots.workspace,
            project_root=roots.project_root,
        )
        kit = SessionKit(
            place,
            store=self.store,
            extensions=self.catalog.current,
            project_values=self.workspace.project_values(),
            tell=lambda text: bus.emit(Notification(session_id, text=text, kind=NotifyKind.WARN)),
        )
        drafts.hooks = DraftHooks(kit.hooks.before, kit.hooks.after)
        confinement = self.workspace.confinement(session_id)
        time_limit = block_time_limit(self.settings, session_id)
        values = self.workspace.project_values()
        tool_context = self._tool_context(session_id, kit, confinement, time_limit, values, roots)
        instructions = SessionInstructions(
            self.workspace.paths.config_dir, self.workspace.project_root, self.workspace.root
        )
        instructions.remember_noted(e.stdout for e in history if isinstance(e, BlockFinished))
        skills = SessionSkills(
            self.workspace.paths.config_dir,
            self.workspace.project_root,
            lambda: self.workspace.trusted,
        )
        tools = SessionTools(
            partial(self._build_tools, session_id, kit, tool_context, skills, drafts),
            tool_contract_of,
        )
        worker = kit.worker
        plan = self._plan_mode(session_id)
        invoker = ToolInvoker(
            session_id=session_id,
            registry=tools.registry,
            emit=bus.emit,
            workspace=roots.workspace,
            project_root=roots.project_root,
            channel=place.channel,
            prepare_arguments=partial(prepare_arguments, instructions),
            runtime=place.runtime,
            session=lambda: self.registry.live_session(session_id),
            worker=worker,
            position=position,
            call_state=kit.call_state,
            plan=plan,
            hold=bus.hold,
        )
        network = self._network_proxy(session_id, kit, bus)
        tool_context.shells.network = network.start  # jailed shell commands: the same proxy
        loop = running_loop() or worker.loop
        # the sandbox child calls most extension tools on channels of its own to their worker
        direct = None if loop is None else DirectPairing(invoker, worker, loop)
        sandbox = Sandbox(
            workspace=roots.workspace,
            call_tool=partial(invoker.call, encoded=True),  # a worker's packed result as is
            call_handle=invoker.call_handle,
            tools=tools.sandbox_entries,
            tools_version=lambda: tools.version,
            snapshot_save=lambda data: self.store.save_sandbox_snapshot(session_id, data),
            snapshot_load=lambda: self.store.load_sandbox_snapshot(session_id),
            jail=confinement.jail,
            idle_timeout=SANDBOX_IDLE_TIMEOUT,
            output_dir=tool_context.output_dir,
            environment=values,
            project_root=roots.project_root,
            refusal=confinement.refusal,
            limits=confinement.limits,
            time_limit=time_limit,
            home_writable=confinement.home_writable,
            read_paths=confinement.read_paths,
            read_only=plan.active or self.subagents.is_read_only(session_id),
            network=network.start,
            draft_slot=drafts.slot,
            direct=direct,
            git_looks=self.workspace.git_looks,
        )
        plan.follow(sandbox.set_read_only)
        if direct is not None:
            plan.follow(lambda active: direct.refresh())  # plan mode refuses what changes
        confined = ConfinedParts(sandbox, tool_context)
        self.registry.keep_parts(session_id, worker, tools, confined)
        hooked = HookedSandbox(
            sandbox,
            kit.hooks,
            session=lambda: kit.session_globals(self.registry.live_session(session_id)),
            wait=after_git_look(self.workspace, self.mcp.wait_named),
            explain=self.mcp.missing_note,
            ahead=kit.block_coming,
            named=kit.block_written,
        )
        watches: set[asyncio.Task[Any]] = set()  # what its event watches started, until done
        hooks = AssemblyHooks(
            self.settings,
            self.mcp,
            session_id,
            prompt=self._prompt(session_id, tools, kit, instructions, skills),
            direct_tools=lambda: self.mcp.direct_tools(
                session_id, tool_context.output_dir, kit.call_state.show
            ),
            instructions=instructions,
            skills=skills,
            reports=partial(background_reports, tool_context.shells, session_id),
            refusal_now=partial(confined.follow_refusal, self.workspace, session_id),
            closer=self._closer(
                session_id,
                closing(
                    partial(end_tasks, watches, cancel=False), tool_context.close, network.close
                ),
                (worker, tools, confined),
                drafts,
            ),
        )
        checkpoints = Checkpoints(
            roots.workspace, self.workspace.paths.data_dir / "checkpoints" / session_id
        )
        deps = SessionDeps(
            store=self.store,
            events=bus,
            model=self.models.model_of_session(session_id),
            sandbox=hooked,
            invoker=invoker,
            hooks=hooks,
            position=position,
            limits=TurnLimits(max_iterations(self.settings, session_id)),
            context=SessionContext(),
            checkpoints=checkpoints,
            instructions=instructions,
            plan=plan,
            drafts=drafts,
            tool_context=tool_context,
        )
        session = AgentSession(deps, session_id=session_id, title=title, history=history)
        follow_drafts(drafts, kit, tool_context, invoker, sandbox, checkpoints, session)
        bus.subscribe(leave_running(tool_context.shells, watches), kinds=(BlockFinished,))
        bus.subscribe(end_strays(sandbox), kinds=(TurnEnded,))
        exits = follow_exits(
            tool_context.shells,
            session_id,
            bus.emit,
            watches,
            bus.flush,
            listed=session.list_background_files,
        )
        bus.subscribe(exits, early=True, kinds=(*ACTIVITY_KINDS, TurnStarted, TurnEnded))
        bus.subscribe(
            control_file_watch(session_id, self.workspace, bus, watches),
            kinds=(
                ActivityEnded,
                BlockFinished,
                TurnEnded,
                BackgroundCommandEnded,
                BackgroundFilesChanged,
            ),
        )
        bus.subscribe(draft_git_watch(session_id, drafts, bus, watches), kinds=(BlockFinished,))
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
        confinement: Confinement,
        time_limit: float,
        values: dict[str, str],
        roots: Roots,
    ) -> ToolContext:
        from vis_core.store.file_versions import SessionFileVersions
        from vis_core.system.shell import ShellManager
        from vis_core.tools import ToolContext
        from vis_core.tools.versions import FileVersions

        return ToolContext(
            workspace=roots.workspace,
            session_id=session_id,
            output_dir=self.workspace.paths.data_dir / "outputs" / session_id,
            jail=confinement.jail,
            versions=FileVersions(log=SessionFileVersions(self.store, session_id)),
            hooks=kit.tool_hooks,
            time_limit=time_limit,
            home_writable=confinement.home_writable,
            git_looks=self.workspace.git_looks,
            shells=ShellManager(
                environment=values,
                project_root=roots.project_root,
                refusal=confinement.refusal,
                limits=confinement.limits,
                home_writable=confinement.home_writable,
                read_paths=confinement.read_paths,
                git_looks=self.workspace.git_looks,
            ),
        )

    def _build_tools(
        self,
        session_id: str,
        kit: SessionKit,
        tool_context: ToolContext,
        skills: SessionSkills,
        drafts: SessionDrafts,
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
            *draft_tools(drafts, self.approval.approver(session_id)),
        ]
        discovery: list[HostTool] = []
        if self.settings.get("introspection", True, session_id):
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
            [*builtins, *discovery, *children, *self.catalog.loaded.host_tools(), *mcp_tools]
        )
        if self.subagents.is_read_only(session_id):  # a read-only child session
            registry = read_only_registry(registry)
        return ToolSet(registry, extension_guides(self.catalog.loaded))

    def _sessions_scope(self, session_id: str) -> str | None:
        """The workspace whose sessions the model's session tools reach (``None``: every one,
        when the person set ``sessions_scope = "all"``)."""
        if self.settings.get("sessions_scope", "workspace", session_id) == "all":
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
    ) -> Callable[[], Coroutine[Any, Any, str]]:
        """The system prompt before each request; it also hides the tools of the extensions
        whose ``activation`` says no for this request (activation and prompt callbacks are
        awaited in the session's extension worker; files and the store are read in a thread)."""
        mcp_prompt = self.mcp.prompt_for_session(session_id)

        async def prompt() -> str:
            place = kit.place  # the draft's roots while the session is in one
            env = kit.env()
            context_for = kit.context_for
            loaded = self.catalog.loaded
            active = await active_among(loaded.enabled, env, kit.worker, context_for)
            names = {ext.name for ext in active}
            parts = await extension_prompts(loaded, env, kit.worker, active, context_for)

            def text() -> str:
                tools.narrow(frozenset(e.name for e in loaded.enabled if e.name not in names))
                text = system_prompt(
                    tools=tools.registry(),
                    workspace=place.workspace_root,
                    project_root=place.project_root,
                    build=self.build_info,
                    extension_prompts=parts,
                    instructions=instructions.section(),
                    skills=skills.section(),
                )
                text += mcp_prompt()
                goal = self.store.state_get("vis.goal", session_id)
                return text + (f"\n\n## Goal of this session\n{goal}" if goal else "")

            return await asyncio.to_thread(text)

        return prompt

    def _network_proxy(self, session_id: str, kit: SessionKit, bus: EventBus) -> Any:
        """The proxy that is the jailed sandbox's only network: the extensions' network filters,
        then the ``network_allowed_hosts`` setting, decide each request."""
        from vis_core.extension_host.network_filters import FilterPolicy
        from vis_core.sandbox.network_proxy import NetworkProxy

        policy = FilterPolicy(
            self.catalog.current,
            lambda: kit.worker,
            lambda: str(self.settings.get("network_allowed_hosts", "", session_id) or ""),
            kit.context_for,
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
        parts: tuple[SessionWorkers, SessionTools, ConfinedParts],
        drafts: SessionDrafts,
    ) -> Callable[[], Any]:
        async def run() -> None:
            try:
                await close()
            finally:
                await asyncio.to_thread(parts[0].stop)
                self.registry.drop_parts(session_id, *parts)
                drafts.release_slot()

        return run
