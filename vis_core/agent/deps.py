"""What a session is built from: one typed dependencies object of narrow protocols."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.agent.event_bus import EventBus
from vis_core.agent.invoker import CallPosition, ToolInvoker
from vis_core.agent.plan import PlanMode
from vis_core.events import Event
from vis_core.model.conversation import ToolDefinition
from vis_core.providers.base import ContextOverflowError, Provider

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession
    from vis_core.model.block import FileChange
    from vis_core.model.draft import Draft, DraftReview
    from vis_core.model.undo import Listed, Scan, UndoReport
    from vis_core.tools.context import FileBuffers


class EventSink(Protocol):
    """Where a session's events are kept (the store)."""

    def append(self, event: Event) -> int: ...

    def append_many(self, events: Iterable[Event]) -> list[int]: ...

    def set_title(self, session_id: str, title: str) -> None: ...


class BlockRunner(Protocol):
    """What the loop needs of the sandbox."""

    async def run(self, code: str) -> Any: ...

    def prepare(self) -> None: ...  # a block is being written: start what it needs

    async def interrupt(self) -> None: ...

    async def close(self) -> None: ...

    # what the running block printed after ``mark`` characters (its last ``most``), new mark
    def printed_since(self, mark: int, most: int) -> tuple[str, int]: ...


class FileWatch(Protocol):
    """What one turn's blocks change in the workspace, block by block (and, after the turn,
    what the commands they left running change: :mod:`vis_core.agent.background_files`)."""

    @property
    def turn_id(self) -> str: ...

    @property
    def seen(self) -> Listed | None: ...  # the listing after a block

    @property
    def scan(self) -> Scan | None: ...  # the scan of the last finish, if it listed the files

    @property
    def note(self) -> str: ...  # what the block's result says of its listing ("": nothing)

    def start(self) -> None: ...  # before a block

    def rebase(self) -> None: ...  # the workspace moved (a draft) during a block

    def finish(self) -> tuple[FileChange, ...]: ...  # after a block: what it changed


class TurnCheckpoints(Protocol):
    """``/undo``: the workspace before each turn changed it (``tools.checkpoints``)."""

    def take(self, turn_id: str, position: int, scan: Scan | None = None) -> object: ...

    def drop_if_unchanged(
        self, turn_id: str, seen: Listed | None = None, *, keep: bool = False
    ) -> bool: ...

    def last_of(self, turn_id: str) -> object | None: ...

    def watch(self, turn_id: str) -> FileWatch: ...

    def restore(self, steps: int = 1) -> UndoReport: ...


class InstructionFile(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def tokens(self) -> int: ...
    def label(self, workspace: Path) -> str: ...


class SessionInstructionFiles(Protocol):
    """The instruction files (AGENTS.md & co) in a session's system prompt, which front ends
    show, and the nested ones its blocks came near, which the loop adds to their output."""

    @property
    def workspace(self) -> Path: ...
    @property
    def files(self) -> Sequence[InstructionFile]: ...
    def take_notes(self) -> str: ...  # the nested files not given yet, once


class WorkRoots(Protocol):
    @property
    def workspace(self) -> Path: ...
    @property
    def project_root(self) -> Path: ...


class SessionDraft(Protocol):
    """The draft a session works in, if any (``drafts.session``, wired in by the host). The
    loop uses none of it: its hooks, front ends, commands and child sessions do."""

    @property
    def draft(self) -> Draft | None: ...
    @property
    def own_draft(self) -> Draft | None: ...  # the draft it made, not one it visits
    def draft_of(self, session_id: str) -> Draft | None: ...  # another session's
    async def visit(self, draft: Draft) -> None: ...  # work in another session's draft
    def roots(self) -> WorkRoots: ...  # where the session works now
    async def changed_files(self) -> list[str]: ...  # git reads them, in a thread
    async def review(self) -> DraftReview: ...  # changed_files and the diff
    async def create(self, label: str | None = None) -> Draft: ...
    async def sync(self) -> list[str]: ...
    async def approve(self, message: str | None = None, reviewed: str = "") -> dict[str, Any]: ...
    async def discard(self) -> None: ...
    async def refresh(self, turn_id: str = "") -> None: ...  # before a turn: a draft gone elsewhere


class ToolFiles(Protocol):
    """How the session's built-in tools reach files (``tools.context``): `vis acp` hands them
    the editor's buffers; a command they left running may change files after its block."""

    def use_buffers(self, buffers: FileBuffers | None) -> None: ...

    def running_commands(self) -> list[str]: ...

    async def stop_commands(self) -> None: ...

    def in_background(self) -> int: ...

    async def background_ended(self) -> None: ...


ITERATIONS_SETTING = "the max_iterations setting"  # where a session's iteration limit came from


@dataclass
class TurnLimits:
    max_iterations: int = 50
    max_iterations_source: str = ITERATIONS_SETTING  # what the stop names
    retry_attempts: int = 3
    retry_base_delay: float = 0.5


class ContextPort(Protocol):
    """What shapes a session's requests beyond its transcript (``vis_core.context``, wired in
    by the host): the utilization the model sees, and recovery from a too-long request. The
    session passes itself to each call."""

    def utilization(self, session: AgentSession) -> dict[str, Any]: ...

    def notes(self, session: AgentSession, turn_id: str) -> Sequence[Event]:
        """Notes for the next request (the budget's hint), recorded before it is built."""
        ...

    async def recover_overflow(
        self, session: AgentSession, turn_id: str, error: ContextOverflowError
    ) -> str | None:
        """Fold settled work so the request fits; what was folded, or None when nothing can."""
        ...


@dataclass
class SessionModel:
    """The provider and model a session talks to, or why there is none."""

    provider: Provider | None
    model: str
    label: str
    problem: str | None = None
    # the session whose settings chose it (None: chosen directly, as a child session's):
    # a saved ``model`` setting switches only the sessions whose settings chose their model
    chosen_for: str | None = None

    def prepare(self) -> None:
        """Start loading what the first request needs (an SDK provider's SDK, 1-3 s of CPU;
        others need nothing), in a daemon thread of its own, which a quit does not wait for.
        An SDK that cannot load fails the first request instead, which says why."""
        from vis_core.providers.sdk_provider import SdkProvider

        provider = self.provider
        if isinstance(provider, SdkProvider):

            def load() -> None:
                with contextlib.suppress(Exception):
                    provider.prepare()

            threading.Thread(target=load, name="vis-model-sdk", daemon=True).start()


@dataclass
class DirectTool:
    """A tool declared to the model directly (not through python_execution)."""

    definition: ToolDefinition
    host_name: str
    present: Callable[[Any], str] | None = None  # the result as the model reads it; may raise


class TurnRefused(Exception):
    """``before_turn`` refuses the turn: its message, which says why and what to fix, is the
    turn's error as it is (no class name before it, no traceback in the log)."""


class SessionHooks(Protocol):
    """What the session's assembler provides around its turns and requests."""

    async def system_prompt(self) -> str:
        """The system prompt of the next request."""
        ...

    def direct_tools(self) -> Sequence[DirectTool]:
        """The tools declared to the model directly (MCP's), now."""
        ...

    async def before_turn(self, session: AgentSession, turn_id: str) -> None:
        """Before turn ``turn_id`` (refusals, files read again); raising stops the turn
        (:class:`TurnRefused`: a refusal the person fixes)."""
        ...

    async def before_request(self, turn_id: str) -> Sequence[Event]:
        """Events to record before each model request (background commands' reports)."""
        ...

    async def close(self) -> None:
        """The session closed: release what it ran on."""
        ...


@dataclass(frozen=True)
class PlainHooks:
    """Hooks of a session with a fixed system prompt and nothing around its turns."""

    prompt: str = ""

    async def system_prompt(self) -> str:
        return self.prompt

    def direct_tools(self) -> Sequence[DirectTool]:
        return ()

    async def before_turn(self, session: AgentSession, turn_id: str) -> None:
        return None

    async def before_request(self, turn_id: str) -> Sequence[Event]:
        return ()

    async def close(self) -> None:
        return None


@dataclass
class SessionDeps:
    """Everything one session runs on. ``events`` is made first, by whoever assembles the
    session (the invoker emits on it too); ``position`` is where its tool calls happen,
    shared with ``invoker``, which reads it."""

    store: EventSink
    events: EventBus
    model: SessionModel
    sandbox: BlockRunner
    invoker: ToolInvoker
    hooks: SessionHooks = field(default_factory=PlainHooks)
    position: CallPosition = field(default_factory=CallPosition)
    limits: TurnLimits = field(default_factory=TurnLimits)
    context: ContextPort | None = None
    checkpoints: TurnCheckpoints | None = None  # /undo: the workspace before each turn changed it
    instructions: SessionInstructionFiles | None = None  # AGENTS.md & co
    plan: PlanMode = field(default_factory=PlanMode)  # read-only until the person approves
    drafts: SessionDraft | None = None  # the draft it works in
    tool_context: ToolFiles | None = None  # its built-in tools' ToolContext
