"""How ``vis.ask`` and ``vis.live`` reach the person: presenters, events, waiting, cancelling."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    Event,
    FormAnswered,
    FormRequested,
    LiveClosed,
    LiveOpened,
    LiveUpdated,
    TurnEnded,
    TurnStarted,
)
from vis_core.extension.context import CallContext, calling
from vis_core.model.activity import ActivityState
from vis_core.model.turn import TurnStatus
from vis_core.system.loops import end_tasks, on_loop, post, running_loop

if TYPE_CHECKING:  # forms and live views load when an extension first uses them
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.live import LiveEvent, LiveSink, LiveView
    from vis_core.extension.live_updates import LiveUpdate

log = logging.getLogger(__name__)

Emit = Callable[[Event], Awaitable[None]]
EMIT_WAIT_SECONDS = 10.0
# what :meth:`Interaction._observe` reads of a session's events
_OBSERVED = (ActivityStarted, ActivityUpdated, ActivityEnded, TurnStarted, TurnEnded)


@dataclass(frozen=True)
class FormRequest:
    """One pending ``vis.ask``: the form (with its validators) and who asked."""

    id: str
    form: Form
    session_id: str | None
    owner: str


class FormPresenter(Protocol):
    """A front end that can show forms: returns the values, ``None`` when the person cancelled,
    or an ``Answer`` (e.g. undeliverable). It is cancelled on timeout or when the turn ends."""

    async def present(self, request: FormRequest) -> Mapping[str, Any] | Answer | None: ...


class _Session(Protocol):
    id: str

    async def emit(self, event: Event) -> None: ...
    def subscribe(
        self,
        callback: Callable[[Event], None],
        *,
        early: bool = False,
        kinds: tuple[type[Event], ...] | None = None,
    ) -> Callable[[], None]: ...


@dataclass
class _Link:
    """How to reach one attached session."""

    session: _Session
    emit: Emit
    unsubscribe: Callable[[], None]


class Interaction:
    """One host's channel to the person: form presenters, open views and session events."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()  # events posted from the loop
        self._presenters: list[FormPresenter] = []
        self._sessions: dict[str, _Link] = {}
        self._pending: dict[str, tuple[FormRequest, asyncio.Future[Any]]] = {}
        self._views: dict[str, tuple[str | None, LiveView]] = {}
        self._panels: dict[tuple[str | None, str], LiveView] = {}
        self._running: dict[tuple[str, str], tuple[str, str | None]] = {}
        # panel views opened by a call still running: view id → (activity id, turn id)
        self._callers: dict[str, tuple[str, str | None]] = {}
        self._turns: dict[str, str] = {}

    # -- wiring -----------------------------------------------------------------------------
    def attach(self, session: _Session) -> None:
        """Route ``vis.ask``/``vis.live`` of ``session``'s calls here and watch its events."""
        self.loop = running_loop() or self.loop
        # early: a view or form opened as a call starts is anchored to its Activity even
        # while the start waits to be committed with the call's end
        unsubscribe = session.subscribe(self._observe, early=True, kinds=_OBSERVED)
        self._sessions[session.id] = _Link(session, session.emit, unsubscribe)

    def detach(self, session: _Session) -> None:
        """Stop watching ``session``; a session of its id opened after it keeps its route."""
        link = self._sessions.get(session.id)
        if link is not None and link.session is session:
            self._unlink(session.id)

    def _unlink(self, session_id: str) -> None:
        link = self._sessions.pop(session_id, None)
        if link is not None:
            link.unsubscribe()

    def add_presenter(self, presenter: FormPresenter) -> Callable[[], None]:
        """Show forms with ``presenter`` (the newest one wins); returns its remover."""
        self._presenters.append(presenter)
        return lambda: self._presenters.remove(presenter) if presenter in self._presenters else None

    def only_session(self) -> str | None:
        """The session attached here when it is the only one (a thread's calls go there)."""
        return next(iter(self._sessions)) if len(self._sessions) == 1 else None

    def view(self, view_id: str) -> LiveView | None:
        entry = self._views.get(view_id)
        return entry[1] if entry else None

    async def close(self) -> None:
        """The host closes: pending forms end as cancelled, open views are interrupted, and
        the events posted to the sessions are delivered."""
        forms = [task for _, task in self._pending.values()]
        for _, view in list(self._views.values()):
            view.interrupt()
        for session_id in list(self._sessions):
            self._unlink(session_id)
        await end_tasks(forms)
        await end_tasks(self._tasks, cancel=False)

    # -- forms ------------------------------------------------------------------------------
    async def ask_async(self, form: Form, session_id: str | None, owner: str) -> Answer:
        """Show ``form`` with the newest presenter and wait (up to ``form.timeout_ms``);
        undeliverable when no front end shows forms."""
        from vis_core.extension.forms import Answer, AnswerReason

        request = FormRequest(uuid.uuid4().hex, form, session_id, owner)
        await self._requested(request)
        if not self._presenters:
            answer = Answer(reason=AnswerReason.UNDELIVERABLE)
        else:
            task = asyncio.ensure_future(self._presenters[-1].present(request))
            self._pending[request.id] = (request, task)
            try:
                answer = await self._settle(form, task)
            except asyncio.CancelledError:  # its asker gave up: taken down, and said so
                task.cancel()
                await asyncio.shield(self._answered(request, Answer(reason=AnswerReason.CANCELLED)))
                raise
            finally:
                self._pending.pop(request.id, None)
                if not task.done():
                    task.cancel()
        await self._answered(request, answer)
        return answer

    async def _answered(self, request: FormRequest, answer: Answer) -> None:
        session_id = request.session_id
        await self._emit(
            session_id,
            FormAnswered(
                session_id or "",
                request_id=request.id,
                reason=answer.reason.value if answer.reason else "submitted",
                values=answer.masked(),
            ),
        )

    async def _settle(self, form: Form, task: asyncio.Future[Any]) -> Answer:
        from vis_core.extension.forms import Answer, AnswerReason

        timeout = form.timeout_ms / 1000 if form.timeout_ms else None
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            task.cancel()
            await asyncio.wait({task})
            return Answer(reason=AnswerReason.TIMEOUT)
        if task.cancelled():
            return Answer(reason=AnswerReason.CANCELLED)
        if task.exception() is not None:
            log.error("showing the form %r failed", form.title, exc_info=task.exception())
            return Answer(reason=AnswerReason.UNDELIVERABLE)
        result = task.result()
        if isinstance(result, Answer):
            return result
        return Answer(reason=AnswerReason.CANCELLED) if result is None else form.answer(result)

    async def _requested(self, request: FormRequest) -> None:
        from vis_core.extension.live_nodes import to_plain

        form = request.form
        await self._emit(
            request.session_id,
            FormRequested(
                request.session_id or "",
                request_id=request.id,
                owner=request.owner,
                title=form.title,
                form={
                    "title": form.title,
                    "description": form.description,
                    "nodes": to_plain(form.nodes),
                },
            ),
        )

    def cancel_forms(self, session_id: str | None = None) -> int:
        """Cancel pending forms (of one session, or all); returns how many."""
        tasks = [
            t for r, t in self._pending.values() if session_id is None or r.session_id == session_id
        ]
        for task in tasks:
            task.cancel()
        return len(tasks)

    # -- live views -------------------------------------------------------------------------
    def sink(self, session_id: str | None, owner: str) -> LiveSink:
        return _HostSink(self, session_id, owner)

    def live_event(self, view_id: str, event: LiveEvent) -> None:
        """The person acted in a view: queue the event and run its ``on_event`` callbacks."""
        view = self.view(view_id)
        if view is None or view.is_closed:
            return
        view.deliver(event)
        loop = self.loop
        for callback in view.callbacks():
            if loop is not None and on_loop(loop):
                loop.run_in_executor(None, _run_callback, view.context, callback, event)
            else:
                _run_callback(view.context, callback, event)

    def _opened(self, session_id: str | None, owner: str, view: LiveView) -> None:
        from vis_core.extension.live import Placement
        from vis_core.extension.live_nodes import to_plain

        if view.placement is Placement.PANEL and view.key is not None:
            old = self._panels.get((session_id, view.key))
            if old is not None and not old.is_closed:
                old.interrupt()
                old.close("replaced")
            self._panels[(session_id, view.key)] = view
        self._views[view.id] = (session_id, view)
        anchor = self._running.get((session_id or "", owner))
        activity_id, turn_id = anchor if anchor else (None, self._turns.get(session_id or ""))
        if anchor and view.placement is Placement.PANEL:
            self._callers[view.id] = anchor
        opened = LiveOpened(
            session_id or "",
            view_id=view.id,
            title=view.title,
            owner=owner,
            placement=view.placement.value,
            key=view.key,
            nodes=to_plain(view.nodes),
            activity_id=activity_id,
            turn_id=turn_id,
        )
        self._submit(session_id, opened, wait=True)

    def _updated(self, session_id: str | None, view: LiveView, updates: list[LiveUpdate]) -> None:
        updated = LiveUpdated(
            session_id or "", view_id=view.id, updates=[u.to_plain() for u in updates]
        )
        self._submit(session_id, updated, wait=False)

    def _closed(
        self, session_id: str | None, view: LiveView, reason: str | None, summary: str | None
    ) -> None:
        self._views.pop(view.id, None)
        self._callers.pop(view.id, None)
        closed = LiveClosed(session_id or "", view_id=view.id, reason=reason, summary=summary)
        self._submit(session_id, closed, wait=True)

    # -- events -----------------------------------------------------------------------------
    async def _emit(self, session_id: str | None, event: Event) -> None:
        link = self._sessions.get(session_id or "")
        if link is None:
            return
        try:
            await link.emit(event)
        except Exception:  # a failed publish must not break the extension's call
            log.exception("could not publish %s", event.type)

    def _submit(self, session_id: str | None, event: Event, *, wait: bool) -> None:
        """Publish ``event`` on the host's loop from any thread (``wait``: until it was taken)."""
        loop = self.loop
        coro = self._emit(session_id, event)
        if not post(loop, coro, self._tasks, wait=EMIT_WAIT_SECONDS if wait else None):
            if wait and loop is not None and not loop.is_closed():
                log.warning("the front end did not take a live view event in time")

    def _observe(self, event: Event) -> None:
        sid = event.session_id
        if isinstance(event, ActivityStarted | ActivityUpdated | ActivityEnded):
            record = event.activity
            if record is None:
                return
            key = (sid, record.owner)
            if record.state is ActivityState.RUNNING:
                self._running[key] = (record.id, record.turn_id)
                return
            if self._running.get(key, ("",))[0] == record.id:
                del self._running[key]
            for view_id, (activity_id, _) in list(self._callers.items()):
                if activity_id == record.id:  # a call that ends leaves its panels open
                    self._callers.pop(view_id, None)
                    if record.state is ActivityState.CANCELLED:
                        self._stop_view(view_id)
        elif isinstance(event, TurnStarted):
            self._turns[sid] = event.turn_id
        elif isinstance(event, TurnEnded):
            if event.status is TurnStatus.CANCELLED:
                self.cancel_forms(sid)
                for view_id, (_, turn_id) in list(self._callers.items()):
                    if turn_id == event.turn_id:  # its call is cancelled with the turn
                        self._stop_view(view_id)
            for view_sid, view in list(self._views.values()):
                from vis_core.extension.live import Placement  # loaded: a view is open

                if view_sid != sid or view.placement is not Placement.INLINE:
                    continue
                if event.status is TurnStatus.CANCELLED:
                    view.interrupt()
                view.close(
                    event.status.value if event.status is not TurnStatus.COMPLETED else "ended"
                )
            self._running = {k: v for k, v in self._running.items() if k[0] != sid}

    def _stop_view(self, view_id: str) -> None:
        """The call that opened the view was cancelled: interrupted, closed as cancelled."""
        view = self.view(view_id)
        if view is not None and not view.is_closed:
            view.interrupt()
            view.close("cancelled")


class _HostSink:
    """A view's changes as session events (batched by the view every ``flush_ms``)."""

    immediate = False

    def __init__(self, interaction: Interaction, session_id: str | None, owner: str) -> None:
        self._interaction = interaction
        self._session_id = session_id
        self._owner = owner

    def opened(self, view: LiveView) -> None:
        self._interaction._opened(self._session_id, self._owner, view)

    def updated(self, view: LiveView, updates: list[LiveUpdate]) -> None:
        self._interaction._updated(self._session_id, view, updates)

    def closed(self, view: LiveView, reason: str | None, summary: str | None) -> None:
        self._interaction._closed(self._session_id, view, reason, summary)

    def later(self, seconds: float, flush: Callable[[], None]) -> None:
        """``flush`` in ``seconds``, a timer on the host's loop (now, with no loop)."""
        loop = self._interaction.loop
        if loop is None or loop.is_closed():
            flush()
        elif on_loop(loop):
            loop.call_later(seconds, flush)
        else:
            loop.call_soon_threadsafe(loop.call_later, seconds, flush)


def _run_callback(
    context: CallContext | None, callback: Callable[[LiveEvent], Any], event: LiveEvent
) -> None:
    try:
        if context is None:
            callback(event)
        else:
            with calling(context):
                callback(event)
    except Exception:  # an extension's callback bug is logged, the view goes on
        log.exception("the on_event callback of a live view failed on %s", event.kind.value)
