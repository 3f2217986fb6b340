"""What an assembled session runs on besides its loop: its hooks around turns, the watches
on its events, draft moves and approvals, and how a tool's arguments are prepared."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.agent.deps import TurnRefused
from vis_core.drafts.guarded import control_warning
from vis_core.events import (
    ActivityEnded,
    BackgroundCommandEnded,
    BackgroundFilesChanged,
    BlockFinished,
    DraftChanged,
    Event,
    Notification,
    TurnEnded,
)
from vis_core.extension.context import current_call
from vis_core.instructions.session import PATH_TOOLS, SessionInstructions
from vis_core.model.channel import Channel
from vis_core.model.draft import Draft, DraftAction, DraftBackend, DraftReview
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import BLOCK_CANCELLED
from vis_core.system.git_dirs import is_repository
from vis_core.system.loops import keep
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.agent.deps import DirectTool
    from vis_core.agent.event_bus import EventBus
    from vis_core.agent.invoker import ToolInvoker
    from vis_core.agent.session import AgentSession
    from vis_core.drafts.session import SessionDrafts
    from vis_core.extension_host.session_kit import SessionKit
    from vis_core.host.workspace import Workspace
    from vis_core.host_options import HostOptions
    from vis_core.interaction import Interaction
    from vis_core.mcp.host import HostMcp
    from vis_core.settings.service import SettingsService
    from vis_core.skills.session import SessionSkills
    from vis_core.tools import ToolContext
    from vis_core.tools.checkpoints import Checkpoints
    from vis_core.tools.registry import HostTool

FORM_FILES = 50  # files the model's approval form lists (the rest are counted)
CONTROL_CHECK_SECONDS = 1.0  # after a tool call, the control files are checked at most this often


def after_git_look(
    workspace: Workspace, wait: Callable[[str], Awaitable[None]]
) -> Callable[[str], Awaitable[None]]:
    """``wait`` (what holds a block until what it names is ready), after the workspace's
    first look for its git files (:meth:`Workspace.look_for_git`, in a thread): what a block
    makes that their configuration names is then told, with the jail on or off."""

    async def held(code: str) -> None:
        await asyncio.to_thread(workspace.look_for_git)
        await wait(code)

    return held


def control_file_watch(
    session_id: str, workspace: Workspace, bus: EventBus, tasks: set[asyncio.Task[Any]]
) -> Callable[[Event], None]:
    """After each block and turn, when a command left running ended or changed files (its
    end report), and after tool calls at most every ``CONTROL_CHECK_SECONDS``, tell the
    person once when the trusted project's control files
    changed (the project needs `vis trust` again at the next start) or a new one (a ``.git``
    in a subfolder too) appeared. Checking hashes every control file and looks in up to
    2,000 folders: after each of a thousand calls of one block it would cost more than they
    do, so it runs in a thread, one check at a time (one asked meanwhile runs after it).
    ``tasks``: the session's, which keeps each check until it ends.
    """
    next_check = 0.0
    checking: asyncio.Task[None] | None = None
    again = False

    async def check() -> None:
        nonlocal again
        while again:
            again = False
            for text in await asyncio.to_thread(workspace.control_notices):
                await bus.emit(Notification(session_id, text=text, kind=NotifyKind.WARN))

    def watch(event: Event) -> None:
        nonlocal next_check, checking, again
        if isinstance(event, ActivityEnded):
            if time.monotonic() < next_check:
                return  # checked a moment ago; the block's end checks again
        elif not isinstance(
            event, BlockFinished | TurnEnded | BackgroundCommandEnded | BackgroundFilesChanged
        ):
            return
        next_check = time.monotonic() + CONTROL_CHECK_SECONDS
        again = True
        if checking is None or checking.done():
            checking = keep(tasks, asyncio.ensure_future(check()))

    return watch


def draft_git_watch(
    session_id: str, drafts: SessionDrafts, bus: EventBus, tasks: set[asyncio.Task[Any]]
) -> Callable[[Event], None]:
    """After each block, tell the person once per draft when the top of a copy draft is a
    git repository and its workspace's is not (a block or command made a ``.git``, or the
    HEAD, objects/ and refs/ git takes as a bare repository): Vis hides ``.git`` from a
    block's file list, and approval refuses the draft until it is gone."""
    told: set[str] = set()

    def watch(event: Event) -> None:
        draft = drafts.draft
        if draft is None or draft.backend is not DraftBackend.COPY or draft.id in told:
            return
        if not is_repository(draft.root) or is_repository(draft.workspace):
            return  # none, or the workspace's own, copied (the jail keeps it read-only)
        told.add(draft.id)
        made = (
            ("a .git", "a .git")
            if os.path.lexists(Path(draft.root, ".git"))
            else ("a git repository (HEAD, objects/ and refs/ git takes as one)", "one")
        )
        text = (
            f"{made[0]} appeared in draft {draft.label} ({draft.root}) during this session (a "
            f"block or command created it). Approval never writes {made[1]}: remove it from "
            "the draft, or discard the draft, before you approve"
        )
        notice = Notification(session_id, text=text, kind=NotifyKind.WARN)
        keep(tasks, asyncio.ensure_future(bus.emit(notice)))

    return watch


@dataclass(frozen=True)
class DraftApproval:
    """Whether the model's ``draft_approve()`` may go on: the person's answer to a form with
    the files and the diff summary, unless setting ``draft_model_approves`` lets the model
    approve alone; ``vis run`` refuses unless ``--allow-approve`` was given."""

    options: HostOptions
    settings: SettingsService
    interaction: Interaction

    def approver(self, session_id: str) -> Any:
        """The approval of session ``session_id``'s drafts."""
        options, interaction = self.options, self.interaction

        async def approve(draft: Draft, review: DraftReview) -> str | None:
            if options.allow_approve or self.settings.get(MODEL_APPROVES, False, session_id):
                return None
            if options.channel is Channel.CLI:
                return (
                    f"vis run does not approve drafts unless --allow-approve is given; draft "
                    f"{draft.label} stays for the person (`vis drafts approve {draft.label}`)"
                )
            from vis_core.extension.forms import Form, paragraph

            files = review.files
            shown = review.stat[:FORM_FILES]
            listed = "\n".join(f"- {line}" for line in shown) or "(no file differs)"
            if len(files) > len(shown):
                listed += f"\n… and {plural(len(files) - len(shown), 'more file')}"
            warning = control_warning(files)
            counted = " (lines added and removed)" if draft.backend is DraftBackend.WORKTREE else ""
            form = Form(
                f"Approve draft {draft.label}?",
                (
                    paragraph(
                        f"The model asks to commit draft {draft.label} to "
                        f"{draft.target_branch or draft.workspace}. "
                        f"{plural(len(files), 'file')}{counted}:"
                    ),
                    paragraph(listed),
                    *((paragraph(warning),) if warning else ()),
                ),
                submit_label="Approve",
                cancel_label="Keep the draft",
            )
            answer = await interaction.ask_async(form, session_id, "vis")
            if answer:
                return None
            reason = answer.reason.value if answer.reason else "cancelled"
            return (
                f"the person did not approve draft {draft.label} ({reason}); it stays as it is. "
                "Ask the person what to change, or let them approve it with /draft"
            )

        return approve


def follow_drafts(
    drafts: SessionDrafts,
    kit: SessionKit,
    tool_context: ToolContext,
    invoker: ToolInvoker,
    sandbox: Any,
    checkpoints: Checkpoints,
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
        checkpoints.move_to(workspace)
        session.moved()

    async def stop_live_commands(_old_root: Path, _new_root: Path) -> None:
        await tool_context.shells.stop_running()  # each started in the live workspace

    drafts.add_mover(move)
    drafts.add_follower(sandbox.follow_now)  # the rest of a running block: the draft only
    drafts.add_follower(stop_live_commands)


def closing(*closers: Callable[[], Any]) -> Callable[[], Any]:
    async def run() -> None:
        try:
            await closers[0]()
        finally:
            for close in closers[1:]:
                await close()

    return run


@dataclass(frozen=True, eq=False)
class AssemblyHooks:
    """What the session asks of its assembly around its turns and requests: ``reports``, what
    its background commands report before a request; ``refusal_now``, its children's refusal
    brought to the settings as read now; ``closer``, what it ran on released."""

    settings: SettingsService
    mcp: HostMcp
    session_id: str
    prompt: Callable[[], Coroutine[Any, Any, str]]
    direct_tools: Callable[[], Sequence[DirectTool]]
    instructions: SessionInstructions
    skills: SessionSkills
    reports: Callable[[str], Awaitable[Sequence[Event]]]
    refusal_now: Callable[[], Awaitable[None]]
    closer: Callable[[], Awaitable[None]]

    def __post_init__(self) -> None:
        self.settings.watch_session(self.session_id)  # what it opens with: catch_up tells changes

    async def system_prompt(self) -> str:
        return await self.prompt()

    async def before_request(self, turn_id: str) -> Sequence[Event]:
        """Settings saved by another process reach the session, then the reports of its
        background commands."""
        return [*await self._catch_up(), *await self.reports(turn_id)]

    async def _catch_up(self) -> list[Event]:
        """Settings saved by another process or files edited since reach the session; a
        failed ``on_change`` is told."""
        failed = await self.settings.catch_up(self.session_id)
        return [Notification(self.session_id, text=f, kind=NotifyKind.WARN) for f in failed]

    async def close(self) -> None:
        self.settings.forget_session(self.session_id)
        await self.closer()

    async def before_turn(self, session: AgentSession, turn_id: str) -> None:
        """Stop the turn, naming the value, when a setting that bounds what a block may do
        (or a ``--toggles`` entry) cannot be read (fail closed), as the settings files are
        now (a file the refusal asked to fix counts at once); else read the instruction
        files and skills again (never between a turn's requests, so its system prompt stays
        the same) and let MCP catch up."""
        for event in await self._catch_up():
            await session.emit(event)
        await self.refusal_now()  # its blocks and shells too: no value changed, no save told them
        problem = self.settings.refusal(self.session_id)
        if problem is not None:
            raise TurnRefused(problem)
        if session.drafts is not None:
            await session.drafts.refresh(turn_id)
        await asyncio.to_thread(self.instructions.refresh)
        await asyncio.to_thread(self.skills.refresh)
        await self.mcp.before_turn(session)


def end_strays(sandbox: Any) -> Callable[[Event], None]:
    """At the turn's end, the processes its blocks started outside ``shell()`` (a
    ``subprocess`` child, a double fork) are killed; the sandbox's namespace stays."""

    def watch(event: Event) -> None:
        if isinstance(event, TurnEnded):
            sandbox.end_strays()

    return watch


def leave_running(shells: Any, tasks: set[asyncio.Task[Any]]) -> Callable[[Event], None]:
    """After each block, the session's commands still running report back when they end;
    after a cancelled block, those it started are stopped instead (Esc stops what it began),
    the stop kept in the session's ``tasks`` until it ends."""

    def watch(event: Event) -> None:
        if not isinstance(event, BlockFinished):
            return
        if event.error == BLOCK_CANCELLED:
            keep(tasks, asyncio.ensure_future(shells.stop_unleft()))
        else:
            shells.leave_running()

    return watch


def prepare_arguments(
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


def tool_contract_of(tool: HostTool) -> dict[str, Any] | None:
    from vis_core.extension_host.symbol_tools import tool_contract

    try:
        return tool_contract(tool)
    except Exception:  # a tool without a readable contract still runs
        return None


def announcer(session_id: str, bus: EventBus) -> Any:
    """Emit :class:`DraftChanged`: the transcript's mark and the status bar's draft."""

    async def announce(
        action: DraftAction,
        draft: Draft,
        files: int,
        text: str,
        turn_id: str = "",
        commit: str = "",
    ) -> None:
        call = current_call()  # a tool call of a turn: the mark goes there
        await bus.emit(
            DraftChanged(
                session_id,
                turn_id=(call.turn_id or "") if call is not None else turn_id,
                action=action,
                label=draft.label,
                backend=str(draft.backend),
                root=draft.root,
                files=files,
                text=text,
                commit=commit,
            )
        )

    return announce


MODEL_APPROVES = "draft_model_approves"  # vis_core/settings/core.py
