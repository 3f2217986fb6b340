"""A session's extension worker, host side: started on the first extension call, stopped with
the session, restarted after ``/reload`` or a fault.

The tools, op hooks and slash commands of its extensions (bundled, user, project, installed
package: those whose declared ``env`` resolves to the same values, see
:mod:`~vis_core.extension_host.session_workers`) run in it, and so do the callbacks of their
declarations: ``prompt``, ``activation``, ``ctx``, a setting's ``on_change`` and an Activity's
``render`` (:meth:`SessionWorker.callbacks`, each with a time limit: one that raises or hangs
fails alone). Its environment is the minimal base plus the project's values; each extension
adds its declared ``env`` at registration, as in the registration worker. A call that is
cancelled (Esc, Ctrl+C) is cancelled in the worker; a worker that does not answer the cancel
within ``WorkerTimes.cancel_grace`` seconds is killed, and the next call starts a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.extension.context import (
    CallContext,
    calling,
    current_call,
    enter_call,
    serving_runtime,
)
from vis_core.extension.metadata import build_metadata
from vis_core.extension.runtime import Runtime
from vis_core.extension_host.environment import resolve_names
from vis_core.extension_host.loaded import LoadedExtensions
from vis_core.extension_host.worker_sdk import (
    SETTING_VALUE,
    loop_waits,
    run_service,
    served_on_loop,
)
from vis_core.ipc.kinds import CallbackKind, ChannelClosed, TargetKind
from vis_core.model.channel import Channel as FrontEnd
from vis_core.system.environ import Audience, child_environment
from vis_core.system.loops import on_loop, running_loop
from vis_core.system.process import ChildGone, ChildProcess, Ending
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.extension_host.worker_channel import Channel
    from vis_core.ipc.messages import Call, Direct
    from vis_core.ipc.pairing import ControlSocket

log = logging.getLogger(__name__)
# SDK calls of one worker that may block at once (a live view's wait, a store read)
SDK_THREADS = 256


@dataclass
class WorkerTimes:
    """Seconds a session's workers allow (one for all of them)."""

    cancel_grace: float = 3.0  # for a worker to answer a cancel before it is killed
    # for a callback that says no other limit (prompt, activation, ctx, on_change, render)
    # before it is cancelled and left out (they run before each request or block, so a hang
    # must not stall it)
    callback_timeout: float = 5.0
    # for an op hook before it is cancelled: a guard or an observer that hangs must not hold
    # the model's call (and every later one into its extension) for ever
    hook_timeout: float = 60.0


@dataclass(frozen=True)
class CallbackCall:
    """One callback to run: ``kind`` of extension ``owner``, of setting or tool ``key``."""

    owner: str
    key: str = ""
    args: tuple = ()
    kwargs: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CallbackOutcome:
    """What one callback returned, or why it failed (``error`` says it for a log line)."""

    value: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class WorkerPlace:
    """The session a worker serves, and the host runtime (and loop) its SDK calls run in."""

    session_id: str | None
    workspace_root: Path
    project_root: Path
    channel: FrontEnd = FrontEnd.TUI
    # the runtime of the Host that serves the session (a second Host's for its sessions);
    # a call's own ``CallContext.runtime`` comes first. None: the SDK's behaviour outside Vis
    runtime: Runtime | None = field(default=None, compare=False)
    # the host's loop: it reads the worker's pipe, also for a worker made in a thread
    loop: asyncio.AbstractEventLoop | None = field(default=None, compare=False)

    def context_for(self, owner: str) -> CallContext:
        """The context of a callback of extension ``owner`` in this session (op hooks, ``ctx``,
        prompts): its session, roots, channel, runtime and loop."""
        return CallContext(
            self.session_id,
            self.workspace_root,
            self.project_root,
            owner=owner,
            channel=self.channel,
            runtime=self.runtime,
            loop=self.loop,
        )


class DirectHost(Protocol):
    """What pairs a session's workers with its sandbox child (direct channels) and hears of
    the calls the child makes on them."""

    def worker_started(self, worker: SessionWorker) -> None:
        """``worker`` started, its extensions loaded (called on any thread)."""

    def report(self, worker: SessionWorker, channel: Channel, frame: Direct) -> None:
        """``worker`` reported a direct call (on the thread that reads its channel)."""

    def settling(self, worker: SessionWorker) -> None:
        """``worker`` was told to cancel a call (on any thread)."""


class _HostHandler:
    """Serves the worker's calls, SDK services and methods of objects lent to it, as tasks on
    the host's loop, in the calling tool's context (its session, extension and Activity); a
    cancel from the worker cancels the task. What must block (a store read, a file, a live
    view's wait) runs in the SDK's pool of threads, awaited."""

    def __init__(self, place: WorkerPlace) -> None:
        self.channel: Channel | None = None
        self._place = place  # the session a thread of an extension reads its settings in
        self._pool: ThreadPoolExecutor | None = None  # what blocks, made with the first

    async def _in_thread(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` in a thread of the SDK's pool, in this task's context, awaited."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(SDK_THREADS, "vis-sdk")
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._pool, context.run, fn)

    def start(self, call: Call, args: tuple, kwargs: dict) -> asyncio.Future[Any]:
        coro = self._served(call, args, kwargs)
        return asyncio.get_running_loop().create_task(coro, context=self._context(call))

    def serve(self, call: Call, args: tuple, kwargs: dict) -> Any:
        """A call that came while the loop waits on the worker (it runs a function of an
        extension there, a form's check, which calls back): served in this thread; one that
        needs the loop is refused, as the loop runs again only once the worker answers."""
        return self._context(call).run(self._served_waiting, call, args, kwargs)

    def _context(self, call: Call) -> contextvars.Context:
        """What ``call`` runs in: a copy of the context of the call it was made from (the
        tool's: its session, extension and Activity); one made from no call (a thread of the
        extension) runs in an empty context, never in whatever context reads the pipe (the
        loop's reader keeps that of the call that started the worker)."""
        assert self.channel is not None
        context = self.channel.context_of(call.parent)
        context = contextvars.Context() if context is None else context.copy()
        if context.run(current_call) is None and call.name == SETTING_VALUE:
            # a thread of an extension: the session's value (it reads, never changes: a change
            # needs a callback)
            context.run(enter_call, self._place.context_for("vis"))
        from vis_core.extension_host.worker_channel import serving  # loaded with the channel

        context.run(serving.set, call.id)  # calls back to the worker name the call they serve
        return context

    def close(self) -> None:
        """The worker is gone: its threads end once what they run returns."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    async def _served(self, call: Call, args: tuple, kwargs: dict) -> Any:
        served = self._on_loop(call)
        if served is not None:
            return await served(*args, **kwargs)
        result = await self._in_thread(partial(self._served_waiting, call, args, kwargs, True))
        if inspect.isawaitable(result):  # a built-in handle's `await sh.wait(30)`
            return await result
        return result

    def _on_loop(self, call: Call) -> Callable[..., Awaitable[Any]] | None:
        """What serves ``call`` on the loop: the runtime's coroutine for its SDK operation, a
        lent object's coroutine method; None: :meth:`_served_waiting` serves it, in a thread."""
        assert self.channel is not None
        if call.target is TargetKind.SDK:
            return served_on_loop(self._runtime(), call.name)
        if call.target is TargetKind.OBJECT and call.ref is not None:
            from vis_core.ipc.trusted import run_method

            value = self.channel.exports.get(call.ref)
            if _async_method(value, call.name):
                return lambda *args, **kwargs: run_method(value, call.name, args, kwargs)
        return None

    def _served_waiting(self, call: Call, args: tuple, kwargs: dict, awaited: bool = False) -> Any:
        """``call``'s synchronous part, in a thread; a coroutine it makes is refused unless it
        will be ``awaited`` (on the loop, which waits on the worker otherwise)."""
        assert self.channel is not None
        if call.target is TargetKind.SDK:
            return run_service(self._runtime(), call.name, args, kwargs)
        if call.target is TargetKind.OBJECT and call.ref is not None:
            from vis_core.ipc.trusted import run_method

            value = self.channel.exports.get(call.ref)
            refused = RuntimeError(loop_waits(f"{type(value).__name__}.{call.name}()"))
            if _async_method(value, call.name):
                raise refused
            result = run_method(value, call.name, args, kwargs)
            if inspect.iscoroutine(result) and not awaited:
                result.close()
                raise refused
            return result
        raise LookupError(f"the host does not serve {call.target} calls from a worker")

    def _runtime(self) -> Runtime | None:
        """The runtime serving an SDK call: the call's own, else the session's host's."""
        return serving_runtime(self._place.runtime)


def _async_method(value: Any, method: str) -> bool:
    """Whether ``method`` of ``value`` is a coroutine function (served on the loop; the others
    may block, and run in a thread)."""
    found = value if method == "__call__" else inspect.getattr_static(value, method, None)
    if isinstance(found, staticmethod | classmethod):
        found = found.__func__
    if method == "__call__" and not inspect.iscoroutinefunction(found):
        found = inspect.getattr_static(type(value), "__call__", None)
    return inspect.iscoroutinefunction(found)


class SessionWorker:
    """One session's extension worker process."""

    def __init__(
        self,
        extensions: Callable[[], LoadedExtensions],
        place: WorkerPlace,
        values: Mapping[str, str],
        *,
        times: WorkerTimes | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """``loop``: the session's event loop (default: the running one, if any);
        ``times``: its session's (default: Vis's)."""
        self._extensions = extensions
        self._place = place
        self._values = dict(values)  # the project's values: the worker's environment adds them
        self.times = times or WorkerTimes()
        self._proc: ChildProcess | None = None
        self._channel: Channel | None = None
        self._problems: dict[str, str] = {}
        self._death: str | None = None
        # why each stopped channel's worker ended: a call learns it after a new worker started
        self._deaths: weakref.WeakKeyDictionary[Channel, str] = weakref.WeakKeyDictionary()
        self._start_lock = threading.Lock()
        self._cancelled: set[int] = set()  # calls cancelled that have not stopped yet
        self._generation = 0  # counts stops: a start asked before one does not happen after
        self.direct: DirectHost | None = None  # pairs it with the sandbox child, if any
        self._control: ControlSocket | None = None  # the running worker's control socket
        # the session's loop reads the worker's answers (none: a thread reads them)
        self._loop: asyncio.AbstractEventLoop | None = loop or running_loop() or place.loop

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def ready(self) -> bool:
        """Whether a worker runs with the session's extensions loaded."""
        channel = self._channel
        return channel is not None and not channel.closed

    @property
    def settling(self) -> bool:
        """Whether calls it was told to cancel still run (a new call waits for them:
        :meth:`call`; so no call goes to it directly meanwhile)."""
        return bool(self._cancelled)

    def hand(self, note: bytes, fd: int | None = None) -> bool:
        """Send the running worker ``note`` (and ``fd``) on its control socket; False when
        none runs, or it does not take it (:meth:`~vis_core.ipc.pairing.ControlSocket.send`)."""
        control = self._control
        return control is not None and self.ready and control.send(note, fd)

    def read_waiting(self) -> None:
        """Handle what the running worker wrote so far (on the loop that reads it)."""
        channel = self._channel
        if channel is not None:
            channel.read_waiting()

    def _reported(self, channel: Channel, frame: Direct) -> None:
        direct = self.direct
        if direct is not None:
            direct.report(self, channel, frame)

    async def call_in(self, target: TargetKind, owner: str, name: str, args: tuple) -> Any:
        """Run an op hook or a slash command of ``owner`` in the worker and await its answer;
        cancelling the awaiting task cancels it there."""
        channel = await self.ready_for(owner)
        return await self._request(
            channel, f"{owner}'s {target} {name}", target, name, args, {}, owner
        )

    async def callbacks(
        self,
        kind: CallbackKind,
        calls: Sequence[CallbackCall],
        *,
        timeout: float | None = None,
        context_for: Callable[[str], CallContext] | None = None,
    ) -> list[CallbackOutcome]:
        """Run ``calls`` in the worker at once and await all of them, in order.

        One that raises, does not answer within ``timeout`` seconds (it is cancelled; a
        worker that ignores the cancel is restarted as for a tool), or whose extension did
        not load here fails alone with its error; the others keep their values.
        ``context_for`` gives each one's call context (what the SDK calls it makes back see).
        """
        if not calls:
            return []
        try:
            if self._channel is None or self._channel.closed:
                await self._started()
        except ChildGone as exc:
            return [CallbackOutcome(error=exc) for _ in calls]
        waiting = _waiting()
        return list(
            await asyncio.gather(
                *(
                    self._callback(
                        kind,
                        item,
                        timeout,
                        None if context_for is None else context_for(item.owner),
                        waiting,
                        True,
                    )
                    for item in calls
                )
            )
        )

    def callback(
        self,
        kind: CallbackKind,
        item: CallbackCall,
        *,
        timeout: float | None = None,
        context: CallContext | None = None,
    ) -> Awaitable[CallbackOutcome]:
        """Run one callback in the worker (an Activity's ``render``); it fails alone as in
        :meth:`callbacks`."""
        return self._callback(kind, item, timeout, context, _waiting(), False)

    async def _callback(
        self,
        kind: CallbackKind,
        item: CallbackCall,
        timeout: float | None,
        context: CallContext | None,
        waiting: frozenset[str],
        in_session: bool,
    ) -> CallbackOutcome:
        """``in_session``: it runs in its context's session (the worker's own, or another's:
        a setting saved with no session, run in a live session's worker)."""
        what = f"the {kind.value} callback of extension {item.owner!r}"
        timeout = self.times.callback_timeout if timeout is None else timeout
        try:
            channel = await self._channel_for(item.owner)
        except ChildGone as exc:
            return CallbackOutcome(error=exc)
        session = [context.session_id] if in_session and context is not None else None
        try:
            with contextlib.nullcontext() if context is None else calling(context):
                call_id, answer = channel.request_async(
                    TargetKind.CALLBACK,
                    kind.value,
                    (item.key, item.owner in waiting, session, *item.args),
                    dict(item.kwargs or {}),
                    owner=item.owner,
                )
        except ChannelClosed:
            return CallbackOutcome(error=ChildGone(self._ended(what, channel)))
        except Exception as exc:  # an argument that cannot cross (a render's result)
            return CallbackOutcome(error=exc)
        try:
            value = await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            self._abandon(channel, call_id, what)
            return CallbackOutcome(
                error=TimeoutError(f"{what} did not answer within {timeout:g} s; it was cancelled")
            )
        except ChannelClosed:
            return CallbackOutcome(error=ChildGone(self._ended(what, channel)))
        except Exception as exc:
            return CallbackOutcome(error=exc)
        return CallbackOutcome(value=value)

    def _abandon(self, channel: Channel, call_id: int, what: str) -> None:
        """Cancel call ``call_id`` that took too long; kill the worker if it does not stop."""
        if channel.closed:
            return
        channel.cancel(call_id)
        self._cancelled.add(call_id)
        if self.direct is not None:  # no direct call until they stopped (or it was killed)
            self.direct.settling(self)
        # the grace is a timer on the session's loop (nothing on it waits on the worker); workers
        # made off the loop (a session built in a thread) learn it from their first call's
        loop = self._loop = self._loop or running_loop()
        if loop is None or loop.is_closed():  # no loop: the next call finds the worker hung
            return
        unanswered = partial(self._unanswered, channel, call_id, what)
        if on_loop(loop):
            loop.call_later(self.times.cancel_grace, unanswered)
        else:
            loop.call_soon_threadsafe(loop.call_later, self.times.cancel_grace, unanswered)

    # -- calls -------------------------------------------------------------------------------

    async def call(
        self,
        tool: HostTool,
        args: tuple,
        kwargs: dict,
        *,
        render: bool = False,
        started: Callable[[Any], Awaitable[None]] | None = None,
    ) -> Any:
        """Run ``tool`` in the worker; cancelling the awaiting task cancels it there.

        ``render``: the worker also draws its Activity's success with the result (one round
        trip instead of two) and answers ``(value, presentation, problem)``; ``problem`` says
        why the render failed (the value stands). A value of data only comes back as the
        worker packed it (:class:`~vis_core.ipc.values.Encoded`). ``started`` (with
        ``render``): the worker draws the Activity's start too, just before the tool runs,
        and sends it ahead: ``started((presentation, problem))`` is awaited with it (or with
        None when none came) before the answer, all in the one round trip."""
        channel = await self.ready_for(tool.owner)
        target = TargetKind.DRAWN_TOOL if render else TargetKind.TOOL
        if started is not None:
            target = TargetKind.STARTED_TOOL
        name = tool.name
        answer = await self._request(channel, name, target, name, args, kwargs, tool.owner, started)
        return _from_worker(answer, render)

    def answer(
        self,
        tool: HostTool,
        channel: Channel,
        answered: asyncio.Future[Any],
        *,
        render: bool = False,
    ) -> Any:
        """What a direct call of ``tool`` returned (its ``Reply``, which ``answered`` holds), as
        :meth:`call` returns it, or its error."""
        try:
            return _from_worker(answered.result(), render)
        except ChannelClosed:
            raise ChildGone(self._ended(tool.name, channel)) from None

    def abandon(self, channel: Channel, call_id: int, what: str) -> None:
        """The caller of call ``call_id`` was cancelled: cancel it in the worker (which is
        killed if it does not stop)."""
        if not channel.closed:
            log.debug("cancelling %s (call %d) in the extension worker", what, call_id)
            self._abandon(channel, call_id, what)

    async def stream(self, owner: str, provider: str, args: tuple) -> Any:
        """Run the stream of ``owner``'s provider ``provider`` in the worker until it ends
        (its events come back through the sink in ``args``); cancelling the awaiting task
        cancels it there."""
        channel = await self.ready_for(owner)
        what = f"the stream of provider {provider!r}"
        args = (provider, False, None, *args)
        provider_call = CallbackKind.PROVIDER.value
        return await self._request(
            channel, what, TargetKind.CALLBACK, provider_call, args, {}, owner
        )

    async def ready_for(self, owner: str) -> Channel:
        """The worker's channel once ``owner`` can be called there: its worker started if none
        runs, and every cancelled call settled (not queued behind one that will never return).
        A time limit on a call starts after this, so a slow start is not the call's."""
        if self._cancelled:
            await self._settled()
        return await self._channel_for(owner)

    async def _channel_for(self, owner: str) -> Channel:
        """The worker's channel (its worker started if none runs), once ``owner`` loaded there."""
        channel = self._channel
        if channel is None or channel.closed:
            channel = await self._started()
        problem = self._problems.get(owner)
        if problem is not None:
            raise ChildGone(f"extension {owner!r} did not load in its worker: {problem}")
        return channel

    async def _request(
        self,
        channel: Channel,
        what: str,
        target: TargetKind,
        name: str,
        args: tuple,
        kwargs: dict,
        owner: str,
        started: Callable[[Any], Awaitable[None]] | None = None,
    ) -> Any:
        """Ask the worker and await its answer; cancelling the awaiting task cancels the call
        there, and a worker that ends first is :class:`ChildGone` (``what`` names the call).
        ``started``: awaited with the early part of the answer first (see :meth:`call`)."""
        early = None if started is None else asyncio.get_running_loop().create_future()
        try:
            call_id, waiting = channel.request_async(
                target, name, args, kwargs, owner=owner, early=early
            )
        except ChannelClosed:
            raise ChildGone(self._ended(what, channel)) from None
        try:
            if early is not None and started is not None:
                await started(await early)
            return await waiting
        except asyncio.CancelledError:
            self.abandon(channel, call_id, what)
            raise
        except ChannelClosed:
            raise ChildGone(self._ended(what, channel)) from None

    async def _settled(self) -> None:
        """Wait until every cancelled call has stopped, or its worker was killed for it, so
        the next call does not queue behind a tool that will never return."""
        while self._cancelled:
            channel = self._channel
            if channel is None or channel.closed:
                self._cancelled.clear()
                return
            self._cancelled = {c for c in self._cancelled if not channel.answered(c)}
            if self._cancelled:
                await asyncio.sleep(0.02)

    def _ended(self, what: str, channel: Channel) -> str:
        cause = self._deaths.get(channel) or self._death or "it stopped"
        return (
            f"the extension worker ended while {what} ran: {cause}; the next call starts a new one"
        )

    def _unanswered(self, channel: Channel, call_id: int, what: str) -> None:
        if channel.answered(call_id) or channel is not self._channel:
            return
        grace = self.times.cancel_grace
        log.warning(
            "the extension worker did not stop %s within %g s of its cancel; it is restarted",
            what,
            grace,
        )
        self._kill(f"it did not stop {what} within {grace:g} s of a cancel, so it was killed")

    # -- the process -------------------------------------------------------------------------

    async def _started(self) -> Channel:
        if self._loop is None or self._loop.is_closed():  # made off any loop: this one reads
            self._loop = asyncio.get_running_loop()
        return await asyncio.to_thread(self._start)

    def _payload(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        loaded = self._extensions()
        environment = loaded.options.environment
        items = []
        for ext in loaded.enabled:
            if ext.declaration is None:
                continue
            items.append(
                {
                    "name": ext.name,
                    "candidate": ext.candidate.to_wire(),  # with a project's verified bytes
                    "env": resolve_names(tuple(ext.declaration.env), environment),
                }
            )
        place = {
            "session_id": self._place.session_id,
            "workspace_root": str(self._place.workspace_root),
            "project_root": str(self._place.project_root),
            "channel": self._place.channel.value,
            "build": build_metadata(),  # computed once in the host, not in each worker
        }
        return place, items

    def prestart(self) -> None:
        """Start the worker now, in the background: the session's first request calls
        prompt or activation callbacks from the event loop, which must not wait for it."""
        generation = self._generation

        def run() -> None:
            try:
                self._start(generation)
            except ChildGone as exc:  # the first call that needs it says so again
                if generation == self._generation:
                    log.warning("%s", exc)

        threading.Thread(target=run, name="vis-worker-start", daemon=True).start()

    def _start(self, generation: int | None = None) -> Channel:
        """The running worker's channel; a new worker when none runs (one start at a time).

        ``generation``: a background start asked at that generation; none after a stop."""
        with self._start_lock:
            channel = self._channel
            if channel is not None and not channel.closed:
                return channel
            if generation is not None and generation != self._generation:
                raise ChildGone("the session closed or reloaded before its worker started")
            self._stop_process()
            self._death = None
            from vis_core.extension_host.registration import START_TIMEOUT, WORKER
            from vis_core.extension_host.worker_channel import Channel
            from vis_core.ipc.pairing import ControlSocket

            control = ControlSocket()  # the sandbox child's direct channels are handed here
            control_fd = control.child_fd
            try:
                proc = ChildProcess(
                    WORKER,
                    env=child_environment(self._values, audience=Audience.VIS),
                    cwd=self._place.workspace_root,
                    pass_fds=(control_fd,),
                )
            except BaseException:
                control.close()
                raise
            control.spawned()
            self._control = control
            handler = _HostHandler(self._place)
            channel = Channel(
                proc.read_fd,
                proc.write_fd,
                handler,
                name="vis-worker-host",
                on_close=lambda: self._closed(proc, handler),
                keep_context=True,
                loop=None if self._loop is None or self._loop.is_closed() else self._loop,
            )
            handler.channel = channel
            channel.direct_reports = partial(self._reported, channel)
            self._proc = proc  # the channel is handed out only once the extensions loaded
            channel.start()
            place, items = self._payload()
            place["control"] = control_fd  # its number in the worker too
            loaded = self._extensions()
            limit = START_TIMEOUT + loaded.options.load_timeout * len(items)
            _, future = channel.request(TargetKind.LOAD, "load", (place, items))
            try:
                problems = channel.wait(future, limit)
            except (TimeoutError, ChannelClosed) as exc:
                if isinstance(exc, TimeoutError):
                    self._kill(f"it did not load the session's extensions within {limit:g} s")
                self._channel = channel
                self._stop_process()
                raise ChildGone(f"the extension worker did not start: {self._death}") from None
            self._problems = dict(problems)
            for name, problem in self._problems.items():
                log.warning("extension %s did not load in its session worker: %s", name, problem)
            self._channel = channel
            if self.direct is not None:
                self.direct.worker_started(self)
            return channel

    def _closed(self, proc: ChildProcess, handler: _HostHandler) -> None:
        """The channel of ``proc`` closed: learn why the process ended; what its SDK calls
        left running in threads ends alone."""
        handler.close()
        if self._death is None:
            self._death = _exit_cause(proc.ending())

    def _kill(self, reason: str) -> None:
        self._death = reason
        if self._proc is not None:
            self._proc.kill()

    def _stop_process(self) -> None:
        proc, channel, control = self._proc, self._channel, self._control
        self._proc = self._channel = self._control = None
        if control is not None:
            control.close()
        if proc is None:
            return
        if proc.running:
            self._death = self._death or "the session closed or its extensions were reloaded"
        proc.kill()
        proc.ending()
        if channel is not None and self._death:
            self._deaths[channel] = self._death
        if channel is not None:  # the process is gone: its reader sees the end of the pipe
            channel.close(self._death or "the extension worker stopped", wait=5.0)
        proc.close()

    def stop(self, reason: str | None = None) -> None:
        """Stop the worker (the session closed, or ``/reload``: the next call starts anew);
        ``reason``: what a call it cuts off says ended its worker."""
        with self._start_lock:
            self._generation += 1
            if reason is not None and self._proc is not None and self._proc.running:
                self._death = self._death or reason
            self._stop_process()


_decode: Callable[..., Any] | None = None  # decode_from_worker, once a worker answered


def _from_worker(value: Any, render: bool = False) -> Any:
    """A tool's value as its worker answered it, packed values kept so
    (:func:`~vis_core.ipc.trusted.decode_from_worker`, loaded with the first answer: not
    imported per call); ``render``: the answer is ``(value, presentation, problem)``, of
    which only the value is encoded."""
    global _decode
    if _decode is None:
        from vis_core.ipc.trusted import decode_from_worker

        _decode = decode_from_worker
    if render:
        return (_decode(value[0], keep_encoded=True), *value[1:])
    return _decode(value, keep_encoded=True)


def _waiting() -> frozenset[str]:
    """The extensions whose running calls wait on the current one: a callback of theirs runs
    inside that call (it holds their lock in the worker), as an op hook does."""
    current = current_call()
    owners = set(() if current is None else current.callers)
    if current is not None and current.owner:
        owners.add(current.owner)
    return frozenset(owners)


def _exit_cause(ending: Ending) -> str:
    why = "" if ending.signal else " (an extension called os._exit or crashed it)"
    return f"it {ending}{why}"
