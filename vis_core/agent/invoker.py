"""Run one host tool call as an Activity: render phases, publishing, state and timing events."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import random
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.agent.plan import PlanMode
from vis_core.events import ActivityEnded, ActivityStarted, ActivityUpdated, Event
from vis_core.extension.context import CallContext, calling
from vis_core.extension_host.activity_bounds import bounded_presentation
from vis_core.extension_host.activity_paths import shorten_presentation
from vis_core.extension_host.call_state import SessionCallState
from vis_core.ipc.encoded import Encoded
from vis_core.model.activity import (
    Activity,
    ActivityPresentation,
    ActivityRecord,
    ActivityState,
    RenderPhase,
    SymbolTag,
)
from vis_core.model.channel import Channel
from vis_core.model.handles import HandleMethod, HostHandle
from vis_core.system.loops import end_tasks, keep, on_loop
from vis_core.tools.registry import HostTool, ToolRegistry

if TYPE_CHECKING:
    from vis_core.extension.runtime import Runtime
    from vis_core.extension_host.session_workers import SessionWorkers
    from vis_core.extension_host.worker_channel import Channel as WorkerChannel
    from vis_core.extension_host.worker_client import SessionWorker
    from vis_core.sandbox.host import HandleCall

log = logging.getLogger(__name__)

Emit = Callable[[Event], Coroutine[Any, Any, None]]
Evolved = TypeVar("Evolved", ActivityRecord, CallContext)


class UnknownToolError(NameError):
    """The model called a tool that does not exist; the message suggests similar names."""


@dataclass(frozen=True)
class CallSite:
    """Where a call happens: the turn, the iteration and the Python form within it."""

    turn_id: str | None = None
    iteration_id: str | None = None
    form: int = 0


@dataclass
class CallPosition:
    """Where one session's tool calls happen now. The session owns it and sets ``site`` as its
    turns and blocks go on; the session's invoker only reads it."""

    site: CallSite = CallSite()


_CROSSING = frozenset({Encoded, type(None), bool, int, float, str, bytes})  # always cross


def returnable(value: Any) -> None:
    """Raise when ``value`` cannot cross back to the sandbox (an Activity then fails)."""
    if type(value) in _CROSSING or isinstance(value, HostHandle):  # Encoded: it crosses as is
        return
    from vis_core.ipc.values import encode  # msgspec: only once a call returns to the sandbox

    try:
        encode(value, handle_out=lambda handle: {"id": ""}, root="result")
    except Exception as exc:
        raise TypeError(f"the result cannot be returned to Python: {exc}") from exc


class ToolInvoker:
    """Calls host tools for one session and reports each call as an Activity."""

    def __init__(
        self,
        *,
        session_id: str,
        registry: Callable[[], ToolRegistry],
        emit: Emit,
        workspace: Path,
        project_root: Path,
        channel: Channel = Channel.TUI,
        prepare_arguments: Callable[[HostTool, tuple, dict], tuple[tuple, dict]] | None = None,
        runtime: Runtime | None = None,
        session: Callable[[], object | None] = lambda: None,
        worker: SessionWorkers | None = None,
        position: CallPosition | None = None,
        call_state: SessionCallState | None = None,
        plan: PlanMode | None = None,
        hold: Callable[[ActivityStarted | ActivityUpdated | ActivityEnded], None] | None = None,
    ) -> None:
        """``hold``: emit an Activity's event without waiting, in order (the event bus's
        :meth:`~vis_core.agent.event_bus.EventBus.hold`); with it, the sandbox child may call
        extension tools directly (:meth:`direct_call`)."""
        self._session_id = session_id
        self._hold = hold
        self._quick_ends: set[asyncio.Task[None]] = set()  # cancelled quick calls' ends
        self._plan = plan  # in plan mode, calls that change things are refused
        self._registry = registry
        self._emit = emit
        self.channel = channel  # the front end its session runs in
        self._prepare = prepare_arguments
        self._session = session  # the agent session, for Vis's own tools (``fold_session``)
        self._found: object | None = None  # the session, once found
        self._worker = worker  # runs the code of every extension, bundled ones included
        self._position = position or CallPosition()  # moved by the session, read here
        # who waits on the session's turn, images shown with a call's result
        self.call_state = call_state or SessionCallState()
        # what every call's record and context share; each call copies them with its own fields
        self._blank_record = ActivityRecord(
            id="",
            session_id=session_id,
            turn_id=None,
            iteration_id=None,
            tool="",
            tag=SymbolTag.OBSERVATION,
            state=ActivityState.RUNNING,
            presentation=None,
        )
        self._blank_context = CallContext(
            session_id=session_id,
            workspace_root=workspace,
            project_root=project_root,
            channel=channel,
            runtime=runtime,
            activities=self,
        )
        # per tool, what each quick call's record and context start from (see ``_quick_bases``)
        self._bases: dict[str, tuple[HostTool, ActivityRecord, CallContext]] = {}

    @property
    def workspace(self) -> Path:
        """The folder the session's tools work in (its draft's, inside a draft)."""
        return self._blank_context.workspace_root

    def move_to(self, workspace: Path, project_root: Path) -> None:
        """The session entered or left a draft: calls from now on run with these roots."""
        self._blank_context = dataclasses.replace(
            self._blank_context, workspace_root=workspace, project_root=project_root
        )
        self._bases = {}

    def _live_session(self) -> object | None:
        """The agent session of the calls (looked up until it exists: it is made after this)."""
        found = self._found
        if found is None:
            found = self._found = self._session()
        return found

    def registry(self) -> ToolRegistry:
        """The session's tools right now (extension SDK calls look tools up here)."""
        return self._registry()

    def _lookup(self, name: str) -> HostTool:
        registry = self._registry()
        tool = registry.get(name)
        if tool is None:
            similar = registry.similar(name)
            hint = f"; did you mean {', '.join(similar)}?" if similar else "; apropos() lists tools"
            raise UnknownToolError(f"no tool named {name!r}{hint}")
        return tool

    async def call(
        self,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        callers: tuple[str, ...] = (),
        parent_id: str | None = None,
        encoded: bool = False,
    ) -> Any:
        """Run ``name``; ``callers`` are the extensions waiting on this call (``vis.tools``),
        ``parent_id`` the Activity of the extension tool that makes it (shown under it);
        ``encoded``: a value its extension worker packed for the sandbox stays packed
        (:class:`~vis_core.ipc.values.Encoded`), for the sandbox, which sends it on as is."""
        value = await self._invoke(
            self._lookup(name), args, kwargs, callers=callers, parent_id=parent_id
        )
        if encoded or type(value) is not Encoded:
            return value
        from vis_core.ipc.trusted import decode_from_worker  # loaded once a worker answered

        return decode_from_worker(value)

    def direct_call(
        self,
        name: str,
        given: tuple[tuple[Any, ...], dict[str, Any]] | None,
        answer: Callable[[BaseException | None, Any], None],
        runner: SessionWorker,
        channel: WorkerChannel,
        call_id: int,
    ) -> QuickCall | None:
        """Record a call of ``name`` that the sandbox child made on its direct channel and
        that ``runner`` runs as its call ``call_id`` (it reported it before it ran), with no
        task of its own: its Activity, context, answer and cancel as :meth:`call` makes them.
        ``given``: its arguments, for a tool whose render callback draws it. An answer the
        worker sent the child itself is :data:`~vis_core.ipc.encoded.SENT`. None: no such
        tool here."""
        tool = self._registry().get(name)
        hold = self._hold
        if tool is None or hold is None:
            return None
        activity = tool.activity
        drawn = activity is not None and activity.render is not None
        quick = QuickCall(self, tool, answer, (given or ((), {})) if drawn else None)
        base_record, base_context = self._quick_bases(tool, quick.loop)
        site = self._position.site
        context = _evolve(
            base_context,
            publish=quick.publish,
            activity_id=(record_id := activity_id()),  # calls made from here show under it
            turn_id=site.turn_id,
            iteration_id=site.iteration_id,
            unanswered_forms=[],  # the call's own
        )
        answered = _Answered.of(quick)
        with calling(context):  # the channel keeps it for the calls made back
            channel.expect(call_id, answered)
        # its Activity is recorded while the worker runs it (as new_record makes it)
        quick.record = record = _evolve(
            base_record,
            id=record_id,
            turn_id=site.turn_id,
            iteration_id=site.iteration_id,
            started_at=time.time(),
            form=site.form,
        )
        quick.context = context
        if record.show_start:
            hold(ActivityStarted(self._session_id, activity=record))
            quick.shown = True
        quick.sent(runner, channel, call_id, answered)
        return quick

    def _quick_runner(self, tool: HostTool) -> SessionWorker | None:
        """The worker whose call of ``tool`` the child may make directly: an extension tool in
        the session's worker whose start no render callback draws, not refused (plan mode,
        its extension waiting on the turn); None when it may not."""
        worker = self._worker
        if worker is None or self._hold is None:
            return None
        activity = tool.activity
        if activity is not None and activity.render is not None and activity.show_start:
            return None  # its start is drawn by the worker, sent ahead of its end: :meth:`call`
        owner = tool.owner
        runner = worker.runner(owner)
        if runner is None:
            return None
        if self._plan is not None and self._plan.refusal(tool.name, tool.tag, owner) is not None:
            return None
        try:
            self.call_state.refuse_waiting(owner, tool.name)
        except RuntimeError:
            return None  # refused, with its Activity: :meth:`call`
        return runner

    def direct_grants(self, runner: SessionWorker) -> dict[str, tuple[str, str, bool]]:
        """The tools the sandbox child may call on ``runner``'s direct channel now, by every
        name the child knows them by: ``(owner, name, drawn)``, ``drawn`` when a render
        callback draws its success (see :meth:`direct_call`)."""
        registry = self._registry()
        grants: dict[str, tuple[str, str, bool]] = {}
        if runner.settling:  # a call to it waits until a cancelled one stopped: the host's
            return grants
        for tool in registry:
            if self._quick_runner(tool) is not runner:
                continue
            activity = tool.activity
            drawn = activity is not None and activity.render is not None
            for name in (tool.name, *tool.aliases):
                if registry.get(name) is tool:
                    grants[name] = (tool.owner, tool.name, drawn)
        return grants

    def _quick_bases(
        self, tool: HostTool, loop: asyncio.AbstractEventLoop
    ) -> tuple[ActivityRecord, CallContext]:
        """What each quick call of ``tool`` copies with its own fields: its record as
        :meth:`new_record` makes it, its context as :meth:`_invoke` makes it (made once per
        tool and session; again after a reload, a move into a draft, or before the session
        is found)."""
        bases = self._bases.get(tool.name)
        if bases is not None and bases[0] is tool and bases[2].loop is loop:
            return bases[1], bases[2]
        activity = tool.activity
        record = self.new_record(  # (its id, time and site are each call's own)
            tool.name,
            activity.label if activity is not None else tool.name,
            tag=tool.tag,
            owner=tool.owner,
            parent_id=None,
            show_start=activity.show_start if activity is not None else True,
        )
        session = self._live_session()
        context = _evolve(
            self._blank_context, owner=tool.owner, loop=loop, callers=(), session=session
        )
        if session is not None:
            self._bases[tool.name] = (tool, record, context)
        return record, context

    async def settle(self) -> None:
        """Wait until the ends of quick calls still being recorded are (the session closes)."""
        await end_tasks(self._quick_ends, cancel=False)

    async def call_handle(self, call: HandleCall) -> Any:
        """Run one method of a host handle (``h.wait(5)``) as an Activity of its own.

        Tag and headline come from the handle class's ``__vis_activities__``, the presentation
        from its ``render_activity``; every call carries the handle's ``activity_handle_id``
        and the owner of the tool that returned the handle, so one receipt groups them.
        """
        handle, method = call.handle, call.method
        meta = type(handle).__vis_activities__.get(method) or HandleMethod()
        origin = self._registry().get(call.origin) if call.origin else None
        prefix = call.origin or type(handle).__name__

        def render(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any) -> Any:
            return handle.render_activity(
                method, phase=phase, args=args, kwargs=kwargs, result=result, error=error
            )

        tool = HostTool(
            name=f"{prefix}.{method}",
            fn=getattr(handle, method),
            tag=SymbolTag(meta.tag),
            activity=Activity(
                meta.label or f"{prefix}.{method}", render=render, show_start=meta.show_start
            ),
            owner=origin.owner if origin is not None else "vis",
        )

        async def run() -> Any:  # on the loop, as the handle's own methods expect
            refused = self._plan.handle_refusal(tool.name, method, tool.tag) if self._plan else None
            if refused is not None:
                raise refused
            value = tool.fn(*call.args, **call.kwargs)
            return await value if inspect.isawaitable(value) else value

        return await self._invoke(
            tool, call.args, call.kwargs, handle_id=handle.activity_handle_id, run=run
        )

    async def _invoke(
        self,
        tool: HostTool,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        callers: tuple[str, ...] = (),
        handle_id: str | None = None,
        run: Callable[[], Awaitable[Any]] | None = None,
        parent_id: str | None = None,
    ) -> Any:
        name = tool.name
        site = self._position.site
        loop = asyncio.get_running_loop()
        activity = tool.activity
        show_start = activity.show_start if activity else True
        record = self.new_record(
            name,
            activity.label if activity else name,
            tag=tool.tag,
            owner=tool.owner,
            parent_id=parent_id,
            show_start=show_start,
            handle_id=handle_id,
        )
        pending: list[asyncio.Task[None]] = []

        async def render(
            phase: RenderPhase,
            result: Any = None,
            error: BaseException | None = None,
            context: CallContext | None = None,
            drawn: tuple[Any, str | None] | None = None,
        ) -> None:
            nonlocal record
            if activity is None or activity.render is None:
                return
            if drawn is not None:  # the worker drew it with the call: (presentation, problem)
                presentation = _drawn(name, phase, drawn)
            elif in_worker:
                presentation = await self._render_in_worker(
                    tool, phase, args, kwargs, result, error, context
                )
            else:
                try:
                    presentation = activity.render(
                        phase=phase, args=args, kwargs=kwargs, result=result, error=error
                    )
                    if inspect.isawaitable(presentation):  # a lent handle's, on the loop
                        presentation = await presentation
                except Exception:  # a render bug never changes the tool's result
                    log.exception("Activity render callback of %s failed in phase %s", name, phase)
                    return
            record = self._presented(record, name, presentation)

        # the extension's render runs in its worker, never in the host (a handle's method,
        # ``run``, is drawn by the host's handle itself); success is drawn with the call
        in_worker = (
            run is None and self._worker is not None and self._worker.is_extension(tool.owner)
        )
        draw_with_call = in_worker and activity is not None and activity.render is not None
        drawn: tuple[Any, str | None] | None = None
        plan = self._plan if run is None else None  # a handle's method is not a tool
        refused = plan.refusal(name, tool.tag, tool.owner) if plan is not None else None
        # the worker draws the start too, sent ahead of the call's end: one round trip
        start_with_call = draw_with_call and show_start and refused is None
        shown = False  # whether ActivityStarted was emitted

        def publish(presentation: ActivityPresentation) -> None:
            nonlocal record
            record = self._with_presentation(record, presentation)
            if not show_start:
                return  # end-only: kept and shown when the call ends
            update = self._emit(ActivityUpdated(self._session_id, activity=record))
            if on_loop(loop):
                pending.append(loop.create_task(update))
            else:
                asyncio.run_coroutine_threadsafe(update, loop).result()

        if show_start and not start_with_call:
            await render(RenderPhase.START)
            await self._emit(ActivityStarted(self._session_id, activity=record))
            shown = True

        async def started(start: tuple[Any, str | None] | None) -> None:
            """The start the worker drew (or None): shown before the call goes on."""
            nonlocal shown
            if start is not None:
                await render(RenderPhase.START, drawn=start)
            await self._emit(ActivityStarted(self._session_id, activity=record))
            shown = True

        context = _evolve(
            self._blank_context,
            owner=tool.owner,
            publish=publish,
            loop=loop,
            activity_id=record.id,  # calls made from here show under this Activity
            turn_id=site.turn_id,
            iteration_id=site.iteration_id,
            callers=callers,
            session=self._live_session(),
            unanswered_forms=[],  # the call's own
        )
        try:
            with calling(context):
                if refused is not None:
                    raise refused
                if run is not None:
                    result = await run()
                else:
                    call_args, call_kwargs = (
                        self._prepare(tool, args, kwargs)
                        if self._prepare and not in_worker
                        else (args, kwargs)  # the worker rebuilds its tool's own arguments
                    )
                    if draw_with_call:
                        assert self._worker is not None
                        self.call_state.refuse_waiting(tool.owner, tool.name)
                        result, *parts = await self._worker.call(
                            tool,
                            call_args,
                            call_kwargs,
                            render=True,
                            started=started if start_with_call else None,
                        )
                        drawn = (parts[0], parts[1])
                    else:
                        result = await self._run(tool, call_args, call_kwargs, in_worker)
            returnable(result)  # a value that cannot reach the sandbox: the call failed
        except asyncio.CancelledError:
            if pending:
                await asyncio.shield(asyncio.gather(*pending, return_exceptions=True))
            record = dataclasses.replace(
                record, state=ActivityState.CANCELLED, ended_at=time.time(), error="cancelled"
            )
            await asyncio.shield(self._end(record, started=shown))
            raise
        except Exception as exc:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            await render(RenderPhase.FAILURE, error=exc, context=context)
            record = self.ended(record, error=exc)
            await self._end(record, started=shown)
            raise
        if pending:  # the updates ``publish`` emitted reach the store before the end
            await asyncio.gather(*pending, return_exceptions=True)
        await render(RenderPhase.SUCCESS, result=result, context=context, drawn=drawn)
        await self._end(self.returned(record, result, context), started=shown)
        return result

    def new_record(
        self,
        tool: str,
        headline: str,
        *,
        tag: SymbolTag,
        owner: str,
        parent_id: str | None,
        show_start: bool = True,
        handle_id: str | None = None,
    ) -> ActivityRecord:
        """A running Activity of this session, at the current turn, iteration and form: the
        session's blank record with this call's fields (see :func:`_evolve`)."""
        site = self._position.site
        return _evolve(
            self._blank_record,
            id=activity_id(),
            turn_id=site.turn_id,
            iteration_id=site.iteration_id,
            tool=tool,
            tag=tag,
            presentation=_headline_only(headline),
            owner=owner,
            show_start=show_start,
            started_at=time.time(),
            handle_id=handle_id,
            form=site.form,
            parent_id=parent_id,
        )

    @classmethod
    def returned(cls, record: ActivityRecord, result: Any, context: CallContext) -> ActivityRecord:
        """``record`` ending now with ``result``: failed if the result reports failure, or if
        the call returned with forms of its own unanswered."""
        if record.handle_id is None and isinstance(result, HostHandle):
            # the call that returns a handle heads the receipt of the handle's later calls
            record = dataclasses.replace(record, handle_id=result.activity_handle_id)
        record = cls.ended(record, error=_failure_of(result))
        unanswered = context.unanswered_forms
        if unanswered and record.state is ActivityState.SUCCEEDED:  # returned, but unasked
            record = dataclasses.replace(record, error="; ".join(unanswered))
        return record

    @staticmethod
    def ended(record: ActivityRecord, *, error: BaseException | None = None) -> ActivityRecord:
        """``record`` ending now: failed with ``error``, else succeeded."""
        if error is None:
            return _evolve(record, state=ActivityState.SUCCEEDED, ended_at=time.time())
        return _evolve(
            record, state=ActivityState.FAILED, ended_at=time.time(), error=_describe(error)
        )

    async def show(self, record: ActivityRecord) -> None:
        """Log an Activity made outside a tool call (a change through the SDK): started while
        it runs, ended after."""
        ended = record.state is not ActivityState.RUNNING
        event = ActivityEnded if ended else ActivityStarted
        await self._emit(event(self._session_id, activity=record))

    async def _run(self, tool: HostTool, args: tuple, kwargs: dict, in_worker: bool) -> Any:
        """Vis's async tools run on the loop, its others in a thread; an extension's tools run
        in the session's extension worker (``in_worker``), one call at a time per extension,
        refused while that extension waits on this session's turn (it would never return)."""
        if in_worker and self._worker is not None:
            self.call_state.refuse_waiting(tool.owner, tool.name)
            return await self._worker.call(tool, args, kwargs)
        if inspect.iscoroutinefunction(tool.fn):
            return await tool.fn(*args, **kwargs)
        value = await asyncio.to_thread(tool.fn, *args, **kwargs)
        return await value if inspect.isawaitable(value) else value  # one it returns: the loop

    async def _render_in_worker(
        self,
        tool: HostTool,
        phase: RenderPhase,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        error: BaseException | None,
        context: CallContext | None,
    ) -> Any:
        """What ``tool``'s render callback draws in its worker for ``phase``; None when it
        failed (logged: a render bug never changes the tool's result)."""
        assert self._worker is not None
        from vis_core.extension_host.worker_client import CallbackCall
        from vis_core.ipc.kinds import CallbackKind

        what = {"phase": phase, "args": args, "kwargs": kwargs, "result": result, "error": error}
        outcome = await self._worker.callback(
            CallbackKind.RENDER, CallbackCall(tool.owner, tool.name, (), what), context=context
        )
        if outcome.ok:
            return outcome.value
        log.warning(
            "Activity render callback of %s failed in phase %s: %s: %s",
            tool.name,
            phase,
            type(outcome.error).__name__,
            outcome.error,
        )
        return None

    def _presented(self, record: ActivityRecord, name: str, presentation: Any) -> ActivityRecord:
        """``record`` with what a render of tool ``name`` drew (None: as it is)."""
        if presentation is None:
            return record
        if not isinstance(presentation, ActivityPresentation):
            log.error("render of %s returned %r, not an ActivityPresentation", name, presentation)
            return record
        return self._with_presentation(record, presentation)

    def _with_presentation(
        self, record: ActivityRecord, presentation: ActivityPresentation
    ) -> ActivityRecord:
        shortened = shorten_presentation(bounded_presentation(presentation), self.workspace)
        handle_id = presentation.handle_id or record.handle_id
        return _evolve(record, presentation=shortened, handle_id=handle_id)

    async def _end(self, record: ActivityRecord, *, started: bool) -> None:
        if not started:
            await self._emit(ActivityStarted(self._session_id, activity=record))
        await self._emit(ActivityEnded(self._session_id, activity=record))


class QuickCall:
    """A sandbox's call of an extension tool that :meth:`ToolInvoker.direct_call` recorded: its
    worker's answer ends it on the loop, with no task, as :meth:`ToolInvoker.call` would
    (``answer`` is the sandbox's); a task is made only for the render of a failure.
    ``given``: the call's arguments, when its render callback draws it (success with the
    call, in the worker)."""

    __slots__ = (
        "_invoker",
        "_tool",
        "_given",
        "record",
        "_answer",
        "loop",
        "context",
        "shown",
        "done",
        "_finishing",
        "_sent",
    )

    def __init__(
        self,
        invoker: ToolInvoker,
        tool: HostTool,
        answer: Callable[[BaseException | None, Any], None],
        given: tuple[tuple[Any, ...], dict[str, Any]] | None = None,
    ) -> None:
        self._invoker = invoker
        self._tool = tool
        self._given = given
        self.record: ActivityRecord  # made once the call is sent
        self._answer = answer
        self.loop = asyncio.get_running_loop()
        self.context: CallContext | None = None
        self.shown = False  # whether its start was emitted
        self.done = False  # answered, or cancelled
        self._finishing: asyncio.Task[None] | None = None  # its end, when it waits
        self._sent: tuple[SessionWorker, WorkerChannel, int, asyncio.Future[Any]] | None = None

    def sent(
        self,
        runner: SessionWorker,
        channel: WorkerChannel,
        call_id: int,
        answered: asyncio.Future[Any],
    ) -> None:
        self._sent = (runner, channel, call_id, answered)

    def publish(self, presentation: ActivityPresentation) -> None:
        """``vis.publish_activity`` from the running tool (see ``_invoke``'s ``publish``)."""
        invoker = self._invoker
        self.record = invoker._with_presentation(self.record, presentation)
        if not self.record.show_start:
            return  # end-only: kept and shown when the call ends
        update = ActivityUpdated(invoker._session_id, activity=self.record)
        if on_loop(self.loop):  # held in order with the call's start and end
            assert invoker._hold is not None  # (a quick call is made only with it)
            invoker._hold(update)
        else:
            asyncio.run_coroutine_threadsafe(invoker._emit(update), self.loop).result()

    def cancel(self) -> asyncio.Task[None] | None:
        """The sandbox gave the call up (its block stopped, its child ended): as for a cancelled
        :meth:`ToolInvoker.call`, the worker is told and the Activity ends cancelled, with no
        answer. The task that ends it (the sandbox waits for it when it closes)."""
        if self.done:
            if self._finishing is not None:  # its failure is being drawn: it ends unanswered
                self._finishing.cancel()
            return self._finishing
        self.done = True
        assert self._sent is not None
        runner, channel, call_id, answered = self._sent
        self._sent = None
        answered.cancel()  # as a task cancels what it awaits: a late answer is dropped
        runner.abandon(channel, call_id, self._tool.name)
        record = dataclasses.replace(
            self.record, state=ActivityState.CANCELLED, ended_at=time.time(), error="cancelled"
        )
        invoker = self._invoker

        async def end() -> None:
            await asyncio.shield(invoker._end(record, started=self.shown))

        return keep(invoker._quick_ends, self.loop.create_task(end()))

    def answered(self, answered: asyncio.Future[Any]) -> None:
        """The worker answered (or its channel closed): end the call, on the loop."""
        if self.done:
            return
        self.done = True
        assert self._sent is not None
        runner, channel = self._sent[0], self._sent[1]
        self._sent = None  # (it holds ``answered``, which holds this: freed without the GC)
        if self._given is None and answered.exception() is None:
            value = answered.result()
            if type(value) is Encoded:  # packed by the worker (most answers): passed on as is
                self._end(None, value)
                return
        drawn: tuple[Any, str | None] | None = None  # (presentation, problem) of its success
        try:
            value = runner.answer(self._tool, channel, answered, render=self._given is not None)
            if self._given is not None:
                value, *success = value
                drawn = (success[0], success[1])
            returnable(value)  # a value that cannot reach the sandbox fails the call
        except Exception as exc:
            self._end(exc, None)
            return
        if drawn is not None:
            name = self._tool.name
            presented = _drawn(name, RenderPhase.SUCCESS, drawn)
            self.record = self._invoker._presented(self.record, name, presented)
        self._end(None, value)

    def _end(self, error: BaseException | None, value: Any) -> None:
        """Answer, then hold the Activity's end (its start too, for an end-only one) in the
        same loop pass, after its updates, before anything the sandbox does next. While its
        render draws its failure in the worker, that is done first, then it answers."""
        invoker = self._invoker
        redraw = self._given if error is not None else None  # its failure is drawn first
        if not redraw:
            hold = invoker._hold
            assert hold is not None  # (a quick call is made only with it)
            self._answer(error, value)  # first: the sandbox goes on while the bus takes them
            for event in self._ending(error, value):
                hold(event)
            self.context = None  # ended: its context (whose ``publish`` holds this) is let go
            return

        async def finish() -> None:  # once its failure is drawn and the bus took the events
            try:
                tool, context = self._tool, self.context
                drawn = await invoker._render_in_worker(
                    tool, RenderPhase.FAILURE, *redraw, None, error, context
                )
                self.record = invoker._presented(self.record, tool.name, drawn)
                for event in self._ending(error, value):
                    await invoker._emit(event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store failed: the call's error
                self._answer(exc, None)
                return
            finally:
                self.context = None  # as for an end held at once (see above)
            self._answer(error, value)

        self._finishing = keep(invoker._quick_ends, self.loop.create_task(finish()))

    def _ending(
        self, error: BaseException | None, value: Any
    ) -> list[ActivityStarted | ActivityEnded]:
        """The events that end the call's Activity: its end, after its start if not shown."""
        assert self.context is not None
        if error is None:
            record = ToolInvoker.returned(self.record, value, self.context)
        else:
            record = ToolInvoker.ended(self.record, error=error)
        session_id = self._invoker._session_id
        ended = ActivityEnded(session_id, activity=record)
        return [ended] if self.shown else [ActivityStarted(session_id, activity=record), ended]


class _Answered(asyncio.Future):  # type: ignore[type-arg]
    """The future of a quick call's answer: the call ends as the channel sets it, in the
    channel's reader, not one loop pass later in a done callback. Made by :meth:`of`."""

    __slots__ = ("_quick",)
    _quick: QuickCall

    @classmethod
    def of(cls, quick: QuickCall) -> _Answered:
        """The future of ``quick``'s answer (the future's own ``__init__``: no Python one)."""
        answered = cls(loop=quick.loop)
        answered._quick = quick
        return answered

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        try:
            self._quick.answered(self)
        except Exception:  # never the channel reader's failure
            log.exception("ending the quick call of %s failed", self._quick.record.tool)

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        try:
            self._quick.answered(self)
        except Exception:  # never the channel reader's failure
            log.exception("ending the quick call of %s failed", self._quick.record.tool)


def activity_id() -> str:
    """A new Activity's id: 32 hex digits, as ``uuid4().hex``, that sort in the order they are
    made: the time in nanoseconds, then 64 random bits. The store's index of activities
    (turn, id) grows at its end, not at a random page per call: a block's thousand calls
    commit a few index pages instead of hundreds. The bits only keep ids made in the same
    nanosecond apart, so ``random`` (reseeded in a forked child) serves: ``os.urandom`` is a
    system call per tool call."""
    return ((time.time_ns() << 64) | random.getrandbits(64)).to_bytes(16, "big").hex()


@functools.lru_cache(maxsize=256)
def _headline_only(headline: str) -> ActivityPresentation:
    """The presentation a call starts with (frozen, so one per headline is shared)."""
    return ActivityPresentation(headline, "")


def _evolve(value: Evolved, **changes: Any) -> Evolved:
    """``dataclasses.replace`` for the per-call path, for the frozen dataclasses each call
    makes (:class:`ActivityRecord`, :class:`CallContext`): they have no ``__post_init__``, no
    ``init=False`` field and no slots, so their attributes are their fields, in order, and a
    copy of them with ``changes`` is what their constructor would build, without its frozen
    attribute writes (tests check both classes stay so). A mutable field (a context's
    ``unanswered_forms``) must be among ``changes``, or the copies share it."""
    evolved = object.__new__(type(value))
    attributes = evolved.__dict__  # (its own, empty: filled in place, no dict made per call)
    attributes.update(value.__dict__)
    attributes.update(changes)
    return evolved


def _drawn(name: str, phase: RenderPhase, drawn: tuple[Any, str | None]) -> Any:
    """The presentation the worker drew with a call of ``name``: ``(presentation, problem)``;
    None when its render failed (logged)."""
    presentation, problem = drawn
    if problem is None:
        return presentation
    log.warning("Activity render callback of %s failed in phase %s: %s", name, phase, problem)
    return None


def _failure_of(result: Any) -> BaseException | None:
    """A result that reports failure itself (an MCP ``isError``) ends its Activity failed."""
    failure = getattr(result, "__vis_activity_failure__", None)
    found = failure() if callable(failure) else None
    return found if isinstance(found, BaseException) else None


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
