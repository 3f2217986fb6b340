"""Start, run, follow and close child sessions, within the depth and concurrency settings."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.agent.session import title_from_request
from vis_core.command_host import Models
from vis_core.events import BlockFinished, Event
from vis_core.model.turn import TurnStatus
from vis_core.store.session_data import resolve_any
from vis_core.subagents.mirror import CallSite, Mirror
from vis_core.system.loops import keep
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.agent.deps import SessionModel
    from vis_core.agent.session import AgentSession
    from vis_core.model.draft import Draft
    from vis_core.providers.base import ModelChoice
    from vis_core.session_tools import SessionTools
    from vis_core.settings.service import SettingsService
    from vis_core.store import Store

READ_ONLY_STATE = "vis.session_read_only"  # extension state namespace: session id -> True
DEPTH_SETTING = "subagent_depth"
CONCURRENCY_SETTING = "subagent_concurrency"
MODELS_SETTING = "subagent_models"
DEFAULT_DEPTH = 1
DEFAULT_CONCURRENCY = 4
MAX_CHAIN = 64  # parents walked at most (a loop in stored rows cannot hang the count)


class SubagentError(RuntimeError):
    """A child session could not start or did not answer (its status and error say why)."""


class SubagentLimitError(SubagentError):
    """A child session would exceed ``subagent_depth`` or ``subagent_concurrency``."""


@dataclass(frozen=True)
class ChildAnswer:
    """How a child's turn ended."""

    session_id: str
    status: TurnStatus
    content: str
    error: str | None
    cost: float
    draft: str | None = None  # the label of the draft a writing child worked in
    draft_files: int = 0
    # files a read-only child's blocks changed with plain Python (the tools refuse; the jail
    # does not make the workspace read-only yet): told, never hidden
    strays: tuple[str, ...] = ()

    def text(self) -> str:
        """The answer as the parent reads it, with what it should know of the child's files."""
        text = self.content
        if self.strays:
            text += (
                f"\n\n[Vis: this read-only child session changed {', '.join(self.strays)} with "
                "plain Python; check those files.]"
            )
        if self.draft is not None:
            text += (
                f"\n\n[Vis: the child's changes ({plural(self.draft_files, 'file')}) are in draft "
                f"{self.draft}; the person reviews it with `vis drafts` and approves it with "
                f"`vis drafts approve {self.draft}`.]"
            )
        return text


class ChildSessions(Protocol):
    """Opening and closing the host's sessions (``vis_core.host.Host`` provides it)."""

    async def new_session(self) -> AgentSession: ...
    async def open_session(self, session_id: str) -> AgentSession: ...
    async def close_session(self, session: AgentSession) -> None: ...


class ChildModels(Models, Protocol):
    """A child's model (the host's ``ModelResolver``): a fresh one, or its parent's."""

    def model_of_session(self, session_id: str) -> SessionModel: ...


@dataclass(frozen=True)
class SubagentDeps:
    """What child sessions use of the host's services (the composition root builds it)."""

    store: Store
    settings: SettingsService
    models: ChildModels
    sessions: ChildSessions
    session_tools: Mapping[str, SessionTools]  # of each open session


class Subagents:
    """The child sessions of one host: who may start one, and running it to its answer."""

    def __init__(self, deps: SubagentDeps) -> None:
        self._deps = deps
        self._running: dict[str, int] = {}  # parent session id -> its children running now

    # -- limits ------------------------------------------------------------------------------

    def depth(self, session_id: str) -> int:
        """How many parents ``session_id`` has (0: a session a person started)."""
        store = self._deps.store
        depth, current = 0, store.get_session(session_id)
        while current is not None and current.parent_id and depth < MAX_CHAIN:
            depth += 1
            current = store.get_session(current.parent_id)
        return depth

    def _limit(self, setting: str, default: int, session_id: str) -> int:
        try:
            return int(self._deps.settings.get(setting, str(default), session_id))
        except (TypeError, ValueError):
            return default

    @contextlib.contextmanager
    def _slot(self, parent_id: str, what: str) -> Iterator[None]:
        """One of the parent's child slots while a child runs; the limits are checked first."""
        allowed = self._limit(DEPTH_SETTING, DEFAULT_DEPTH, parent_id)
        if self.depth(parent_id) + 1 > allowed:
            raise SubagentLimitError(
                f"{what}: a child session here would be "
                f"{plural(self.depth(parent_id) + 1, 'level')} "
                f"deep, and setting {DEPTH_SETTING} allows {allowed}"
                + (" (child sessions are off)" if allowed == 0 else "")
                + "; do the work in this session, or ask the person to raise the setting"
            )
        most = self._limit(CONCURRENCY_SETTING, DEFAULT_CONCURRENCY, parent_id)
        if self._running.get(parent_id, 0) >= most:
            raise SubagentLimitError(
                f"{what}: {most} child sessions of this session already run (setting "
                f"{CONCURRENCY_SETTING}); await some of them before starting more"
            )
        self._running[parent_id] = self._running.get(parent_id, 0) + 1
        try:
            yield
        finally:
            self._running[parent_id] -= 1
            if not self._running[parent_id]:
                del self._running[parent_id]

    def is_read_only(self, session_id: str) -> bool:
        return self._deps.store.state_get(READ_ONLY_STATE, session_id) is True

    # -- children ----------------------------------------------------------------------------

    async def run(
        self,
        parent: AgentSession,
        request: str,
        *,
        model: str | None = None,
        read_only: bool = True,
        site: CallSite | None = None,
    ) -> ChildAnswer:
        """Run ``request`` as one turn of a new child session of ``parent`` and return how it
        ended. ``read_only`` False: the child works in a draft of its own. ``site``: the call
        the child's Activities and cost are shown under. Cancelled, the child's turn is
        cancelled and the child closed before the cancel goes on."""
        what = "run_session()"
        if not isinstance(request, str) or not request.strip():
            raise ValueError(f"{what}: the request must be nonblank text")
        if not read_only and parent.plan.active:
            raise SubagentError(
                f"{what}: this session is in plan mode, so its children change nothing either; "
                "call run_session(request) without read_only=False"
            )
        if not read_only and self.is_read_only(parent.id):
            raise SubagentError(
                f"{what}: this session is read-only, so its children are too; call "
                "run_session(request) without read_only=False"
            )
        with self._slot(parent.id, what):
            store, sessions = self._deps.store, self._deps.sessions
            chosen = self._model(parent, model, what)
            child = await _opened(sessions.new_session(), chosen)
            try:
                store.set_parent(child.id, parent.id)
                await self._deps.settings.inherit(child.id, parent.id)
                child.title = title_from_request(request)
                store.set_title(child.id, child.title)
                within = parent.drafts.draft if parent.drafts is not None else None
                await self._prepare(child, chosen, read_only=read_only, within=within)
                note = (
                    "read-only: tools that change files or run commands are refused"
                    if read_only
                    else f"you work in your parent's draft {within.label}"
                    if within is not None
                    else f"you work in your own draft {child.drafts.draft.label}"
                    if child.drafts is not None and child.drafts.draft is not None
                    else "you may change files"
                )
                text = (
                    f"[Vis: you are a child session of session {parent.id[:8]} ({note}); your "
                    f"last answer is returned to it.]\n\n{request}"
                )
                return await self._turn(parent, child, text, site)
            finally:
                await asyncio.shield(sessions.close_session(child))

    async def consult(
        self,
        parent: AgentSession,
        session: Any,
        question: str,
        *,
        site: CallSite | None = None,
        workspace: str | None = None,
    ) -> dict[str, Any]:
        """Ask stored session ``session`` (an id, a prefix, a marker or a ``list_sessions()``
        row) ``question`` in a read-only fork of it; the original is never changed."""
        from vis_core.extension_host.session_changes import fork_stored

        what = "consult()"
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"{what}: the question must be nonblank text")
        if isinstance(session, dict):
            session = session.get("id")
        store, sessions = self._deps.store, self._deps.sessions
        source = resolve_any(store, session, what, workspace=workspace)
        with self._slot(parent.id, what):
            # born with the asker's group and session values: what bounds its blocks
            forked = fork_stored(store, source.id, None, what, settings_of=parent.id)
            row = await asyncio.wrap_future(forked)
            store.set_parent(row.id, parent.id)
            chosen = self._model(parent, None, what)
            child = await _opened(sessions.open_session(row.id), chosen)
            try:
                # the files as that session has them: its draft's, while it works in one
                within = child.drafts.draft_of(source.id) if child.drafts else None
                await self._prepare(child, chosen, read_only=True, within=within)
                text = (
                    f"[Vis: session {parent.id[:8]} ({parent.title or 'untitled'}) consults this "
                    "session. Answer its question from what this session found, and check what "
                    "you cite against the files as they are now; this is a read-only fork, "
                    f"nothing can be changed.]\n\n{question}"
                )
                answer = await self._turn(parent, child, text, site)
            finally:
                await asyncio.shield(sessions.close_session(child))
        if answer.status is not TurnStatus.COMPLETED:
            raise SubagentError(failure(what, answer))
        return {
            "session_id": source.id,
            "title": source.title,
            "answer": answer.content,
            "fork_id": row.id,
        }

    def _model(self, parent: AgentSession, model: str | None, what: str) -> Any:
        """The child's model: the parent's (a fresh provider), else ``provider/model`` of the
        parent's provider or one setting ``subagent_models`` allows. A child sends what it
        reads of the workspace to its model: a block cannot send it to a provider the person
        did not choose (a cloud one, when they chose a local model)."""
        from vis_core.providers.base import ModelChoice

        models = self._deps.models
        if model is None:
            chosen = models.model_of_session(parent.id)
        else:
            if not isinstance(model, str) or "/" not in model:
                raise ValueError(f"{what}: model must read 'provider/model', not {model!r}")
            choice = ModelChoice.parse(model.strip())
            own = parent.model.label.partition("/")[0]
            if choice.provider != own and not self._allowed(choice, parent.id):
                raise SubagentError(
                    f"{what}: {choice.provider}/{choice.model} is not of this session's provider "
                    f"({own}), and setting {MODELS_SETTING} does not allow it (a child sends "
                    "what it reads to its model); leave model out to use this session's, or "
                    f"ask the person to add it to {MODELS_SETTING}"
                )
            chosen = models.session_model(choice)
        if chosen.provider is None:
            raise SubagentError(f"{what}: cannot use {chosen.label}: {chosen.problem}")
        return chosen

    def _allowed(self, choice: ModelChoice, session_id: str) -> bool:
        """Whether setting ``subagent_models`` (``provider/model`` or ``provider/*``, apart by
        commas) lists ``choice`` for a child of ``session_id``."""
        listed = str(self._deps.settings.get(MODELS_SETTING, "", session_id) or "")
        entries = {entry.strip() for entry in listed.split(",")}
        return f"{choice.provider}/{choice.model}" in entries or f"{choice.provider}/*" in entries

    async def _prepare(
        self, child: AgentSession, chosen: Any, *, read_only: bool, within: Draft | None = None
    ) -> None:
        """The child's model, and where it works: in draft ``within`` (another session's,
        whose files it then reads and changes), else the workspace, or a draft of its own
        when it may write."""
        await child.switch_model(chosen)
        if within is not None and child.drafts is not None:
            await child.drafts.visit(within)
        if read_only:
            self._deps.store.state_set(READ_ONLY_STATE, child.id, True)
            tools = self._deps.session_tools.get(child.id)
            if tools is not None:
                tools.reset()  # built again, read-only
            set_read_only = getattr(child.sandbox, "set_read_only", None)
            if set_read_only is not None:  # with the jail on, its blocks cannot write either
                set_read_only(True)
        elif child.drafts is not None and within is None:
            await child.drafts.create()

    async def _turn(
        self, parent: AgentSession, child: AgentSession, text: str, site: CallSite | None
    ) -> ChildAnswer:
        mirror = Mirror(parent, site) if site is not None else None
        unsubscribe = child.subscribe(mirror) if mirror is not None else None
        strays: list[str] = []
        read_only = self.is_read_only(child.id)

        def changed(event: Event) -> None:
            if read_only and isinstance(event, BlockFinished):
                strays.extend(c.path for c in event.files if c.path not in strays)

        unwatch = child.subscribe(changed)
        task = asyncio.current_task()
        if task is not None:  # a cancelled parent turn ends after this child closed
            keep(parent.children, task)
        try:
            ended = await child.submit(text)
        finally:
            unwatch()
            if unsubscribe is not None:
                unsubscribe()
            if mirror is not None:
                await mirror.close()
        if task is not None and task.cancelling():  # the parent was cancelled: so is the child
            raise asyncio.CancelledError
        draft = child.drafts.own_draft if child.drafts is not None else None
        return ChildAnswer(
            child.id,
            ended.status,
            ended.content,
            ended.error,
            ended.cost,
            draft.label if draft is not None else None,
            len(await child.drafts.changed_files()) if child.drafts is not None and draft else 0,
            tuple(strays),
        )


async def _opened(opening: Awaitable[AgentSession], chosen: Any) -> AgentSession:
    """The session ``opening`` gives; when it fails, the child's chosen provider is closed."""
    try:
        return await opening
    except BaseException:
        close = getattr(chosen.provider, "aclose", None)
        if close is not None:
            await close()
        raise


def failure(what: str, answer: ChildAnswer) -> str:
    """What the model reads when a child did not answer."""
    why = f": {answer.error}" if answer.error else ""
    return f"{what}: child session {answer.session_id[:8]} ended {answer.status.value}{why}"
