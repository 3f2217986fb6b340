"""A session's extension worker process: loads the session's extensions and runs their code.

Started through :mod:`~vis_core.extension_host.worker_start`; frames
(:mod:`vis_core.ipc.messages`) travel on the original stdin/stdout. The host
first sends ``load`` (the session and each extension's entry file and declared ``env``
values), then ``tool``, ``hook``, ``command`` and ``callback`` calls (prompt, activation, ctx,
a setting's on_change, an Activity's render); SDK services go back to the host
(:mod:`worker_sdk`). Calls into one extension run one at a time (a render runs beside the
tool it draws). The worker has one event loop: it reads the pipe, runs each call's
synchronous part on a thread of the channel and awaits the coroutine a call returns as a
task on the loop; a tool that is a plain function, called while nothing else runs, the loop
runs itself (no thread hop; the channel's watchdog reads the pipe for the loop when it lasts).
A cancel cancels that task, or ends the SDK call a synchronous call waits in; a call deaf to
it is killed with its worker by the host.

The same program in its load-only mode (:func:`main` with ``load_only``) is the registration
worker: it only loads entry files and reports each declaration, over the same channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import os
import sys
import threading
from asyncio import _get_running_loop  # the running loop or None (no exception to catch)
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from vis_core import codegen_cache
from vis_core.extension.acting import follow_threads
from vis_core.extension.context import CallContext, enter_call, leave_call
from vis_core.extension_host.child_output import capture_child_output
from vis_core.extension_host.output import ExtensionOutput, LogSink, to_log
from vis_core.extension_host.worker_channel import CallCancelled as ToolCancelled
from vis_core.extension_host.worker_channel import Channel, Later
from vis_core.ipc.kinds import CallbackKind, TargetKind
from vis_core.ipc.messages import Call
from vis_core.ipc.trusted import (
    ENCODED_CALL,
    encode_answer_for_host,
    encode_for_host,
    run_method,
    scalar_arguments,
)
from vis_core.model.activity import RenderPhase
from vis_core.model.channel import Channel as FrontEnd
from vis_core.system.child_process import (
    ProtocolFds,
    collector_on,
    exit_with_parent,
    take_protocol_fds,
)


@dataclass(frozen=True, slots=True)
class _Tool:
    """A tool of a loaded extension: its function, whether that is plain (no coroutine
    function: the loop may run it itself), and its Activity's render."""

    fn: Callable[..., Any]
    plain: bool
    render: Callable[..., Any] | None


@dataclass(slots=True)
class _Running:
    task: asyncio.Task[Any] | None = None  # the coroutine the call returned, awaited
    cancelled: bool = False


_DONE = frozenset({type(None), bool, int, float, str, bytes, list, tuple, dict})  # never awaitable
_UNLOCKED = contextlib.nullcontext()  # for a call that runs inside one holding the lock
_TOOL_TARGETS = frozenset({TargetKind.TOOL, TargetKind.DRAWN_TOOL, TargetKind.STARTED_TOOL})


class WorkerHandler:
    """Serves the host's calls: ``load``, ``tool`` and calls of objects lent to the host."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.channel: Channel | None = None
        self._loop = loop  # the worker's one loop: each call's coroutine is a task on it
        self._tasks: set[asyncio.Task[Any]] = set()
        self.place: CallContext | None = None  # the session it serves, as no extension's call
        self._tools: dict[tuple[str, str], _Tool] = {}
        self._commands: dict[tuple[str, str], Callable[..., Any]] = {}
        self._hooks: dict[str, tuple[Any, ...]] = {}
        self._declarations: dict[str, Any] = {}  # each extension's ``Extension``
        self._locks: dict[str, threading.RLock] = {}
        # by owner, in the worker's session; by (owner, session) in another one
        self._contexts: dict[str | tuple[str, str | None], CallContext] = {}
        self._running: dict[int, _Running] = {}
        self._cancelled_early: set[int] = set()  # cancelled before their thread took them
        self._lock = threading.Lock()
        self.direct: Any = None  # the sandbox child's direct channel (DirectCalls), once given

    def inline(self, call: Call) -> bool:
        """Whether the loop may run ``call`` itself: a tool that is not a coroutine function,
        while no call and no coroutine of the worker runs (it would wait on the loop)."""
        if call.target not in _TOOL_TARGETS or self._running or self._tasks:
            return False
        tool = self._tools.get((str(call.owner), call.name))
        return tool is not None and tool.plain

    def serve(self, call: Call, args: tuple, kwargs: dict) -> Any:
        target = call.target
        if target in _TOOL_TARGETS:
            return self._tool(call, args, kwargs)
        owner = str(call.owner)
        if target is TargetKind.COMMAND:
            fn = self._commands.get((owner, call.name))
            if fn is None:
                raise LookupError(f"extension {owner!r} has no command /{call.name} here")
            return self._run(call, fn, args, kwargs)
        if target is TargetKind.HOOK:
            index, payload, inside = args
            hooks = self._hooks.get(owner, ())
            if not 0 <= int(index) < len(hooks):
                raise LookupError(f"extension {owner!r} has no op hook #{index} in this worker")
            # ``inside``: the extension's call that waits on this operation holds its lock,
            # so the hook runs inside that call instead of waiting for it forever
            return self._run(call, hooks[int(index)].fn, (payload,), {}, lock=not inside)
        if target is TargetKind.CALLBACK:
            key, inside, session, *rest = args
            fn = self._callback(owner, CallbackKind(call.name), str(key))
            # a render runs beside the tool it draws (which holds the lock); ``inside``: the
            # extension's call that waits on this one holds it (on_change of a setting its
            # tool saves), so the callback runs inside that call, as an op hook does
            locked = call.name != CallbackKind.RENDER and not inside
            # ``session``: ``[id]`` of the session it runs for when that is not the worker's
            # own (a setting saved with no session, run in another session's worker)
            return self._run(call, fn, tuple(rest), kwargs, lock=locked, session=session)
        if target is TargetKind.OBJECT:
            assert self.channel is not None and call.ref is not None
            value = self.channel.exports.get(call.ref)
            if call.name == ENCODED_CALL:  # a lent handle's method: its value as records
                method, *rest = args
                return encode_for_host(run_method(value, str(method), tuple(rest), kwargs), None)
            return run_method(value, call.name, args, kwargs)
        if target is TargetKind.LOAD:
            return self._load(*args)
        raise LookupError(f"an extension worker does not serve {call.target} calls")

    def _tool(self, call: Call, args: tuple, kwargs: dict) -> Any:
        owner = str(call.owner)
        tool = self._tools.get((owner, call.name))
        if tool is None:
            raise LookupError(f"extension {owner!r} has no tool {call.name!r} in this worker")
        fn = tool.fn
        # records from the sandbox become the tool's own dataclasses here, where its module
        # lives (the host does not need the extension's classes for it)
        given = (args, kwargs)
        if not scalar_arguments(args, kwargs):  # scalars are never rebuilt
            from vis_core.records import coerce_arguments

            args, kwargs = coerce_arguments(fn, args, kwargs, owner=owner)
        # the value crosses as records made here, where its classes live (the host never
        # loads the extension's module)
        if call.target is TargetKind.TOOL:
            return self._run(call, fn, args, kwargs, then=encode_answer_for_host)
        render = tool.render
        before: Callable[[], None] | None = None
        if call.target is TargetKind.STARTED_TOOL:  # its start, drawn and sent ahead of it
            channel = self.channel
            assert channel is not None

            def send_start() -> None:
                channel.send_early(call.id, _draw(render, given, None, RenderPhase.START))

            before = send_start

        return self._run(
            call,
            fn,
            args,
            kwargs,
            then=lambda v, owner: (encode_for_host(v, owner), *_draw(render, given, v)),
            before=before,
        )

    def _callback(self, owner: str, kind: CallbackKind, key: str) -> Callable[..., Any]:
        """The callback ``kind`` of extension ``owner`` (of setting or tool ``key``)."""
        declaration = self._declarations.get(owner)
        if declaration is None:
            raise LookupError(f"extension {owner!r} is not loaded in this worker")
        fn: Any = None
        if kind is CallbackKind.RENDER:
            tool = self._tools.get((owner, key))
            fn = None if tool is None else tool.render
        elif kind is CallbackKind.PROVIDER:
            # here: its module brings the host's provider types, which no other call needs
            from vis_core.extension_host.provider_stream import pump_stream

            provider = next((p for p in declaration.providers if p.name == key), None)
            fn = None if provider is None else partial(pump_stream, provider)
        elif kind is CallbackKind.NETWORK_FILTER:
            from vis_core.extension.network import run_filter  # only a filter's call needs it

            found = next((f for f in declaration.network_filters if f.name == key), None)
            fn = None if found is None else partial(run_filter, found)
        elif kind is CallbackKind.ON_CHANGE:
            setting = next((s for s in declaration.settings if s.id == key), None)
            fn = None if setting is None else setting.on_change
        else:
            fn = getattr(declaration, kind.value)
        if not callable(fn):
            what = f"{kind.value} of {key!r}" if key else kind.value
            raise LookupError(f"extension {owner!r} has no {what} callback in this worker")
        return fn

    # -- load --------------------------------------------------------------------------------

    def _load(self, place: dict[str, Any], extensions: list[dict[str, Any]]) -> dict[str, str]:
        """Load each entry file; the problems by extension name (none when all loaded)."""
        from vis_core.extension_host.discovery import Candidate
        from vis_core.extension_host.entry import EntryFailed, execute_entry

        self.place = CallContext(
            place.get("session_id"),
            Path(place["workspace_root"]),
            Path(place["project_root"]),
            channel=FrontEnd(place.get("channel") or FrontEnd.TUI),
        )
        build = dict(place["build"])  # the host's build globals: none computed here
        control = place.get("control")  # the control socket the host pairs channels on
        if type(control) is int and control >= 0 and self.direct is None:
            self._loop.call_soon_threadsafe(self._open_direct, control)
        problems: dict[str, str] = {}
        for item in extensions:
            candidate = Candidate.from_wire(item["candidate"])
            try:
                declaration, module = execute_entry(candidate, dict(item["env"]), build=build)
            except EntryFailed as failed:
                problems[str(item["name"])] = str(failed.error)
                continue
            _register_records(declaration.name, module)
            self._locks[declaration.name] = threading.RLock()
            self._declarations[declaration.name] = declaration
            self._hooks[declaration.name] = tuple(declaration.op_hooks)
            for command in declaration.slash_commands:
                self._commands[(declaration.name, command.name)] = command.run
            # each tool by its dotted name, as the host's ``HostTool`` names it (the host
            # built those, with their contracts, from the registration worker's report)
            for symbol in declaration.symbols:
                for entry in symbol.entries:
                    activity = entry.activity
                    self._tools[(declaration.name, entry.path)] = _Tool(
                        entry.fn,
                        not inspect.iscoroutinefunction(entry.fn),
                        None if activity is None else activity.render,
                    )
        codegen_cache.save()  # the classes only workers define, for the next worker's start
        return problems

    def _open_direct(self, control: int) -> None:
        """Take the sandbox child's direct channels from the host's control socket (on the
        loop)."""
        from vis_core.extension_host.direct_calls import DirectCalls

        assert self.channel is not None
        self.direct = DirectCalls(self.channel, self._loop, control)

    # -- tools -------------------------------------------------------------------------------

    def _run(
        self,
        call: Call,
        fn: Callable[..., Any],
        args: tuple,
        kwargs: dict,
        *,
        lock: bool = True,
        session: list[str | None] | None = None,
        then: Callable[[Any, str], Any] | None = None,
        before: Callable[[], None] | None = None,
    ) -> Any:
        """Run ``fn`` of extension ``call.owner`` as that extension, one call at a time, in
        the worker's session (or ``session[0]``); ``then`` gets its value and the owner, in
        the same call; ``before`` runs just before ``fn``, as it does.

        The call's context names its extension, which is what ``current_extension`` reads."""
        owner = str(call.owner)
        context = self._context(owner, session)
        running = _Running()
        later = False
        self._running[call.id] = running  # first, then a cancel that came before (``cancel``)
        if self._cancelled_early and call.id in self._cancelled_early:
            self._cancelled_early.discard(call.id)
            running.cancelled = True
        try:
            with self._locks[owner] if lock else _UNLOCKED:
                token = enter_call(context)
                try:
                    if running.cancelled:
                        raise ToolCancelled()
                    if before is not None:
                        before()
                    value = fn(*args, **kwargs)
                    if type(value) not in _DONE and inspect.isawaitable(value):
                        if _get_running_loop() is self._loop:  # the loop runs the call itself
                            later = True
                            return self._later(call, value, running, then)
                        value = self._settle(value, running)
                    return value if then is None else then(value, owner)
                finally:
                    leave_call(token)
        except ToolCancelled:
            raise asyncio.CancelledError(f"{call.name} was cancelled") from None
        except Exception as exc:
            _report_failure(call, exc)
            raise
        finally:  # no lock: a cancel finds it or not either way, and one that lands after
            if not later:  # the call is caught by the channel
                self._running.pop(call.id, None)

    def _later(
        self,
        call: Call,
        awaitable: Any,
        running: _Running,
        then: Callable[[Any, str], Any] | None,
    ) -> Later:
        """A call the loop runs itself returned ``awaitable``: a task on the loop awaits it
        (in this call's context) and answers the call when it ends."""
        answer: asyncio.Future[Any] = self._loop.create_future()
        task = self._loop.create_task(_awaited(awaitable), context=contextvars.copy_context())
        self._tasks.add(task)
        running.task = task

        def done(task: asyncio.Task[Any]) -> None:
            self._tasks.discard(task)
            self._running.pop(call.id, None)
            try:
                value = task.result()
                if isinstance(value, _Exited):
                    raise value.error
                answer.set_result(value if then is None else then(value, str(call.owner)))
            except asyncio.CancelledError:
                answer.set_exception(asyncio.CancelledError(f"{call.name} was cancelled"))
            except BaseException as exc:
                if isinstance(exc, Exception):
                    _report_failure(call, exc)
                answer.set_exception(exc)

        task.add_done_callback(done)
        return Later(answer)

    def _context(self, owner: str, session: list[str | None] | None) -> CallContext:
        """The context of a call of ``owner`` in the worker's session (or ``session[0]``): the
        same for each of them, made once."""
        key = owner if session is None else (owner, session[0])
        context = self._contexts.get(key)
        if context is None:
            place = self.place
            assert place is not None
            session_id = place.session_id if session is None else session[0]
            context = self._contexts[key] = CallContext(
                session_id, place.workspace_root, place.project_root, owner, place.channel
            )
        return context

    def _settle(self, awaitable: Any, running: _Running) -> Any:
        """Await an async call's coroutine as a task on the worker's loop (in this thread's
        context: its call and extension), and wait here for it to end."""
        settled: Future[Any] = Future()
        context = contextvars.copy_context()

        def start() -> None:  # on the loop
            if running.cancelled:
                _close(awaitable)
                settled.set_exception(ToolCancelled())
                return
            task = self._loop.create_task(_awaited(awaitable), context=context)
            self._tasks.add(task)
            running.task = task
            task.add_done_callback(done)

        def done(task: asyncio.Task[Any]) -> None:
            self._tasks.discard(task)
            if task.cancelled():
                settled.set_exception(ToolCancelled())
            elif (error := task.exception()) is not None:
                settled.set_exception(error)
            elif isinstance(value := task.result(), _Exited):
                settled.set_exception(value.error)
            else:
                settled.set_result(value)

        self._loop.call_soon_threadsafe(start)
        return settled.result()

    def cancel(self, call_id: int) -> None:
        """Stop call ``call_id`` (on the loop): cancel its task, else end the SDK call its
        thread waits in (and any it makes next); one that has not started will not start.

        A call registers itself without this lock, then looks for its cancel: so a cancel
        notes itself first, then looks for the call once more."""
        with self._lock:
            running = self._running.get(call_id)
            if running is None:  # not started yet (it waits in the pool): it will not start
                self._cancelled_early.add(call_id)
                running = self._running.get(call_id)
                if running is None:
                    return
                self._cancelled_early.discard(call_id)  # it started just now: stopped as such
            if running.cancelled:
                return
            running.cancelled = True
            task = running.task
        if task is not None:  # asyncio's cancel, where the coroutine awaits next
            if _get_running_loop() is self._loop:
                task.cancel()
            else:  # read by a thread while the loop runs a call
                self._loop.call_soon_threadsafe(task.cancel)
        elif self.channel is not None:
            self.channel.interrupt(call_id)


@dataclass(frozen=True, slots=True)
class _Exited:
    """``sys.exit`` or an interrupt raised by a call's coroutine: it ends the call, not the
    loop (a task re-raises those two out of the loop)."""

    error: BaseException


async def _awaited(awaitable: Any) -> Any:
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as exc:
        return _Exited(exc)


def _draw(
    render: Callable[..., Any] | None,
    given: tuple[tuple, dict],
    value: Any,
    phase: RenderPhase = RenderPhase.SUCCESS,
) -> tuple[Any, str | None]:
    """The presentation of a tool call in ``phase`` (success: it returned ``value``), drawn
    by its Activity's ``render`` with the arguments as given; or why the render failed."""
    if render is None:
        return None, None
    args, kwargs = given
    try:
        drawn = render(phase=phase, args=args, kwargs=kwargs, result=value, error=None)
        return drawn, None
    except Exception as exc:  # a render bug never changes the tool's result
        return None, f"{type(exc).__name__}: {exc}"


def _register_records(owner: str, module: Any) -> None:
    """Tell the records registry the classes of ``owner``'s module and its submodules, so an
    unannotated argument's record rebuilds as that extension's own class."""
    from vis_core.records import registry

    prefix = module.__name__ + "."
    modules = [module] + [
        m for k, m in sorted(sys.modules.items()) if k.startswith(prefix) and m is not None
    ]
    registry.replace_owner(owner, [cls for m in modules for cls in registry.classes_in_module(m)])


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


# the modules of extensions' own code: loaded entry files and the bundled extensions
_EXTENSION_MODULES = ("vis_ext_", "vis_extensions")


def _report_failure(call: Call, exc: Exception) -> None:
    """A tool or slash command that raised: its traceback goes to the extension's log (only
    the exception's class and text cross to the host), and a command's exception gets a note
    naming where in the extension's own code it was raised, which its error shows."""
    if call.target is not TargetKind.COMMAND and call.target not in _TOOL_TARGETS:
        return
    import traceback  # only when a call failed

    where = ""
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if str(frame.f_globals.get("__name__", "")).startswith(_EXTENSION_MODULES):
            where = f"({Path(frame.f_code.co_filename).name}:{line} in {frame.f_code.co_name})"
    what = f"/{call.name}" if call.target is TargetKind.COMMAND else f"tool {call.name}"
    owner = str(call.owner)
    said = traceback.format_exception_only(exc)[0].strip()  # even when its __str__ raises
    # a tool's exception is often its answer (bad input from the model): not an error of Vis
    level = "error" if call.target is TargetKind.COMMAND else "info"
    _print_to_host(level, f"{what} failed: {said} {where}".rstrip(), owner)
    for row in "".join(traceback.format_exception(exc)).splitlines():
        _print_to_host(level, row, owner)
    if where and call.target is TargetKind.COMMAND:
        exc.add_note(where)


def _print_to_host(level: str, message: str, source: str) -> None:
    """A line an extension printed (in a call or in a thread it started): to its log through
    the host."""
    from vis_core.extension.runtime import current_runtime

    with contextlib.suppress(Exception):  # the channel is gone: the line still goes somewhere
        current_runtime().log(level, message, source)  # the host's vis.log
        return
    if sys.__stderr__ is not None:
        sys.__stderr__.write(f"[{source}] {message}\n")


def _begin(sink: LogSink) -> ProtocolFds:
    """What the worker program does first, in either mode: the original stdin/stdout become
    the host's pipes, and what extension code prints (its children too) goes to its log."""
    fds = take_protocol_fds()  # output that bypasses sys.stdout goes to stderr (host logs it)
    sys.stdout = ExtensionOutput(sys.stderr, "info", sink=sink, main_is_vis=False)
    sys.stderr = ExtensionOutput(sys.stderr, "warn", sink=sink, main_is_vis=False)
    follow_threads()  # a thread an extension starts acts for it (vis.log, its output)
    capture_child_output()  # what its children print and it does not read: to its log
    exit_with_parent()
    return fds


def main(load_only: bool = False) -> None:
    """Serve the host until it closes the channel. ``load_only``: only load entry files and
    report each declaration (:mod:`~vis_core.extension_host.screening`); what an entry file
    prints goes to the log file, as no session is there to show it."""
    fds = _begin(to_log if load_only else _print_to_host)
    asyncio.run(_serve(fds.read, fds.write, load_only))


async def _serve(fd_in: int, fd_out: int, load_only: bool = False) -> None:
    """Serve the host on this process's one loop until it closes the channel."""
    from vis_core.extension.runtime import install
    from vis_core.extension_host.screening import LoadOnly
    from vis_core.extension_host.worker_sdk import WorkerRuntime

    loop = asyncio.get_running_loop()
    closed = asyncio.Event()

    def on_close() -> None:  # from the loop, or from a thread that reads the pipe for it
        loop.call_soon_threadsafe(closed.set)

    handler = LoadOnly() if load_only else WorkerHandler(loop)
    channel = Channel(
        fd_in,
        fd_out,
        handler,
        name="vis-worker",
        on_close=on_close,
        loop=loop,
    )
    handler.channel = channel
    if not load_only:  # SDK calls go to the host (load-only: entry files use the store)
        install(WorkerRuntime(channel))
    collector_on()
    channel.start()
    await closed.wait()
    os._exit(0)  # a tool still hung in a thread must not keep the process alive
