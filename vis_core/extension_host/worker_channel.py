"""One side of the frame channel between the host and an extension worker: calls both ways.

Each side numbers its own calls and waits on them with futures. The process's one event loop
reads the pipe as it becomes readable and answers its callers' futures itself, with no thread
in between. A handler with ``start`` (the host's: SDK services) serves the other side's calls
as tasks on the loop, and a cancel from the other side cancels the task; else they are served
on threads of the channel (the worker's: extension code may block). A caller that blocks the
loop, or waits while the loop does not run (or no loop is given), reads the pipe itself until
it is answered. A call the handler says a plain function serves (:meth:`Handler.inline`: an
extension's ``def`` tool, nothing else of it running) the loop serves itself, with no thread
in between either; when it lasts longer than ``INLINE_LIMIT``, the watchdog reads the pipe
for the loop until it ends (other calls go to threads, cancels are seen).
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import os
import select
import threading
import time
from asyncio import _get_running_loop  # the running loop or None (no exception to catch)
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from functools import partial
from typing import Any, Protocol

from vis_core.ipc.encoded import SENT
from vis_core.ipc.framing import FrameReader, FrameWriter, ProtocolError
from vis_core.ipc.messages import (
    Call,
    Cancel,
    Direct,
    Early,
    Frame,
    Release,
    Reply,
    TargetKind,
    decode_frame,
    framed,
)
from vis_core.ipc.trusted import (
    ChannelClosed,
    Exports,
    dumps,
    dumps_arguments,
    dumps_error,
    loads,
)
from vis_core.ipc.values import Encoded

log = logging.getLogger(__name__)
MAX_FRAME = 256 << 20  # bounds a corrupt length, not a real message
MAX_THREADS = 256  # calls served at once (a hung tool holds one until its worker restarts)
INLINE_LIMIT = 0.01  # seconds a call the loop serves itself may keep the pipe unread
WATCHDOG_REST = 1.0  # seconds without a call after which the watchdog waits for the next
WAIT_SLICE = 0.2  # seconds a blocking wait lasts before it looks again (who reads, a cancel)

# the other side's call this thread serves, sent as ``parent`` with calls made from it
serving: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "vis_worker_serving", default=None
)


class CallCancelled(BaseException):
    """Raised in a served call the other side cancelled, by the calls it makes back (not an
    ``Exception``: extension code does not catch it)."""


class Handler(Protocol):
    """What one side does with the other side's calls. A handler may also have
    ``inline(call) -> bool``: whether the loop may serve ``call`` itself (see :class:`Later`);
    or ``start(call, args, kwargs) -> asyncio.Future``: it serves the calls as tasks on the
    channel's loop (``start`` begins one, on the loop; the channel answers when it ends and
    cancels it when the other side cancels the call). A call that comes while the loop itself
    waits on the other side (it reads the pipe in :meth:`Channel.wait`), or when no loop runs,
    goes to ``serve`` then, in a thread. A handler without ``start`` may have
    ``cancel(call_id)``, told when the other side cancels a call ``serve`` runs; one without
    it has nothing to stop (its calls end on their own)."""

    def serve(self, call: Call, args: tuple, kwargs: dict) -> Any: ...


class DirectAnswer(Protocol):
    """Where the answer of a call the sandbox child made on its direct channel goes: to the
    child itself, once the other side has the ``Reply`` that says so (the host, which stores
    the call's Activity, learns of its end first)."""

    @property
    def usable(self) -> bool:
        """Whether the child can be answered directly (its channel is open)."""
        ...

    def answer(self, value: Encoded | None) -> None:
        """After the ``Reply``: send ``value`` to the child; None: the host answers it."""
        ...


class Later:
    """What a call the loop serves itself returns when its answer comes later (a function that
    returned an awaitable): the future of the answer, on the loop."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future


class Channel:
    """Calls to the other side and the serving of its calls, over two pipe fds."""

    def __init__(
        self,
        fd_in: int,
        fd_out: int,
        handler: Handler,
        *,
        name: str,
        on_close: Callable[[], None] | None = None,
        keep_context: bool = False,
        loop: asyncio.AbstractEventLoop | None = None,
        max_threads: int = MAX_THREADS,
        watchdog_rest: float = WATCHDOG_REST,
    ) -> None:
        """``loop``: the process's loop, which reads the pipe (None: only a caller that waits
        reads it); ``max_threads``: calls of the other side served at once; ``watchdog_rest``:
        seconds without a call after which the watchdog waits for the next."""
        self.exports = Exports()
        self._max_threads = max_threads
        self._watchdog_rest = watchdog_rest
        self._loop = loop
        fd_in = os.dup(fd_in)  # a copy of its own: closed once nothing reads it any more
        os.set_blocking(fd_in, False)
        self._fd_in = fd_in
        self._writer = FrameWriter(fd_out)
        self._handler = handler
        self._may_inline: Callable[[Call], bool] | None = getattr(handler, "inline", None)
        # serves the other side's calls as tasks on the loop (see Handler), by call id
        self._start: Callable[[Call, tuple, dict], asyncio.Future[Any]] | None = getattr(
            handler, "start", None
        )
        self._stop: Callable[[int], None] | None = getattr(handler, "cancel", None)
        self._tasks: dict[int, asyncio.Future[Any]] = {}
        self._reading_loop = False  # the loop reads now (``_readable``): a call may be kept
        self._kept: tuple[Call, tuple[tuple, dict]] | None = None  # for the loop to serve
        self._name = name
        self._on_close = on_close
        self._pending: dict[int, Future[Any] | asyncio.Future[Any]] = {}
        self._early: dict[int, asyncio.Future[Any]] = {}  # calls whose start comes ahead
        # the context each outgoing call was made in, so calls made back from it run there
        self._keep_context = keep_context
        self._contexts: dict[int, contextvars.Context] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._closed: str | None = None
        self._released: deque[int] = deque()  # proxies dropped here, told with the next frame
        self._frames = FrameReader(MAX_FRAME)
        self._inline: Call | None = None  # the call the loop serves itself now
        self._inline_calls = 0  # how many it served (the watchdog rests when none come)
        self._watchdog: threading.Thread | None = None
        self._watching = threading.Event()  # set while calls come: the watchdog looks
        self._watched_calls = False  # whether it is set (read on every call: cheaper)
        self._read_to_end = threading.Event()  # nothing reads the pipe any more
        # the loop reads, or a caller that waits where the loop cannot answer
        self._pump = threading.Lock()
        self._watched = False  # the loop watches the fd (it has run ``_watch``)
        self._serving: ThreadPoolExecutor | None = None  # serves the other side
        # the other side's calls it cancelled, and the calls back each served call waits on
        self._interrupted: set[int] = set()
        self._waits: dict[int, set[Future[Any]]] = {}
        # what takes the worker's reports of the sandbox child's direct calls (the host's)
        self.direct_reports: Callable[[Direct], None] | None = None
        # fds the watchdog reads too while the loop serves a call itself (the worker's direct
        # channel with the sandbox child), each with what reads it
        self.also_read: dict[int, Callable[[], None]] = {}

    def start(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():  # else callers read while they wait
            self.soon(self._watch)

    @property
    def closed(self) -> bool:
        return self._closed is not None

    # -- calling the other side -------------------------------------------------------------

    def request(
        self,
        target: TargetKind,
        name: str,
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        owner: str | None = None,
        ref: int | None = None,
        parent: int | None = None,
    ) -> tuple[int, Future[Any]]:
        """Send a call; its id and the future of its answer (wait with :meth:`wait`)."""
        future: Future[Any] = Future()
        return self._send(future, target, name, args, kwargs, owner, ref, parent), future

    def request_async(
        self,
        target: TargetKind,
        name: str,
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        owner: str | None = None,
        ref: int | None = None,
        early: asyncio.Future[Any] | None = None,
    ) -> tuple[int, Awaitable[Any]]:
        """Send a call from a coroutine; its id and what to await for its answer (on the
        channel's loop, a future the loop answers itself; cancelling it abandons the call).
        ``ref``: the object lent by the other side it calls a method of. ``early`` (on the
        loop only): answered with the :class:`Early` part of the answer when it comes, or
        None when the call ends without one."""
        if self._loop is not None and self._on_loop():
            future = self._loop.create_future()
            call_id = self._send(future, target, name, args, kwargs, owner, ref, None, early)
            return call_id, future
        if early is not None:  # off the loop, an early part is not waited for
            early.get_loop().call_soon_threadsafe(_settle, early, None, True)
        call_id, waiting = self.request(target, name, args, kwargs, owner=owner, ref=ref)
        return call_id, asyncio.wrap_future(waiting)

    def _send(
        self,
        future: Future[Any] | asyncio.Future[Any],
        target: TargetKind,
        name: str,
        args: tuple,
        kwargs: dict | None,
        owner: str | None,
        ref: int | None,
        parent: int | None,
        early: asyncio.Future[Any] | None = None,
    ) -> int:
        payload = dumps_arguments(args, kwargs or {}, self.exports, self)
        with self._lock:
            if self._closed is not None:
                raise ChannelClosed(self._closed)
            call_id = next(self._ids)
            self._pending[call_id] = future
            if early is not None:
                self._early[call_id] = early
            if self._keep_context:
                self._contexts[call_id] = contextvars.copy_context()
        frame = framed(Call(call_id, target, name, payload, owner, ref, parent))
        try:
            if self._released:
                self._send_released()
            self._writer.write(frame)
        except OSError as exc:
            with self._lock:
                self._pending.pop(call_id, None)
                self._contexts.pop(call_id, None)
                self._early.pop(call_id, None)
            raise ChannelClosed(f"the extension worker is gone ({exc})") from None
        return call_id

    def call(
        self,
        target: TargetKind,
        name: str,
        args: tuple = (),
        kwargs: dict | None = None,
        **where: Any,
    ) -> Any:
        """Make a call and wait for its answer (from a thread, never from the event loop).

        Made from a served call that the other side cancels (:meth:`interrupt`), it raises
        :class:`CallCancelled`, and the call it made is cancelled in turn."""
        parent = serving.get()
        where.setdefault("parent", parent)
        if parent is not None and parent in self._interrupted:
            raise CallCancelled()
        call_id, future = self.request(target, name, args, kwargs, **where)
        if parent is not None:
            with self._lock:
                self._waits.setdefault(parent, set()).add(future)
                if parent in self._interrupted:
                    _settle(future, CallCancelled(), False)
        try:
            return self.wait(future)
        except BaseException:  # the waiter gave up (its tool was cancelled): so does the call
            if not self.answered(call_id):
                self.cancel(call_id)
            raise
        finally:
            if parent is not None:
                with self._lock:
                    self._waits.get(parent, set()).discard(future)

    def interrupt(self, call_id: int) -> None:
        """The other side cancelled its call ``call_id``: the calls back it waits on, and any
        it makes from now on, raise :class:`CallCancelled` (until it is answered)."""
        with self._lock:
            self._interrupted.add(call_id)
            waits = list(self._waits.get(call_id, ()))
        for future in waits:
            _settle(future, CallCancelled(), False)

    def wait(self, future: Future[Any], timeout: float | None = None) -> Any:
        """The answer of a call made with :meth:`request` (blocking: from a thread, or from
        the loop when it must). Waits in short slices, so a cancelled tool's thread can be
        interrupted meanwhile; reads the pipe itself when the loop would not (this thread
        blocks the loop, the loop does not run, or there is none)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if future.done():
                return future.result()
            left = WAIT_SLICE if deadline is None else min(WAIT_SLICE, deadline - time.monotonic())
            if left <= 0:
                raise TimeoutError("the other side did not answer in time")
            if not self._read_to_end.is_set() and self._unread():
                self._read_for(future, left)
                continue
            try:
                return future.result(left)
            except TimeoutError:  # the loop may be held up: read what it left unread
                if not self._read_to_end.is_set():
                    self._read_for(future, 0.0)

    def call_object(self, ref: int, method: str, args: tuple, kwargs: dict) -> Any:
        return self.call(TargetKind.OBJECT, method, args, kwargs, ref=ref)

    def call_object_async(self, ref: int, method: str, args: tuple, kwargs: dict) -> Awaitable[Any]:
        return self.request_async(TargetKind.OBJECT, method, args, kwargs, ref=ref)[1]

    def released(self, ref: int) -> None:
        """A proxy of the other side's object ``ref`` was dropped (from a finalizer, on any
        thread, maybe while this thread writes: it is only queued here)."""
        if self._closed is None:
            self._released.append(ref)

    def _send_released(self) -> None:
        refs: list[int] = []
        try:
            while True:  # popleft, never a copy: finalizers may append meanwhile
                refs.append(self._released.popleft())
        except IndexError:
            pass
        if refs:
            self._writer.write(framed(Release(tuple(refs))))

    def send_early(self, call_id: int, value: Any) -> None:
        """Send the first part of the answer to the other side's call ``call_id``."""
        self._writer.write(framed(Early(call_id, dumps(value, self.exports, self))))

    def cancel(self, call_id: int) -> None:
        """Ask the other side to stop call ``call_id`` (it answers when it stopped)."""
        try:
            self._writer.write(framed(Cancel(call_id)))
        except OSError:
            log.debug("%s: cancel of call %d not sent, the other side is gone", self._name, call_id)

    def context_of(self, call_id: int | None) -> contextvars.Context | None:
        """The context outgoing call ``call_id`` was made in, while it runs."""
        if call_id is None:
            return None
        with self._lock:
            return self._contexts.get(call_id)

    def answered(self, call_id: int) -> bool:
        with self._lock:
            return call_id not in self._pending

    def expect(self, call_id: int, future: asyncio.Future[Any]) -> None:
        """Wait for the answer of the other side's own call ``call_id`` (a direct call of the
        sandbox child, which it reported) as for a call made here: ``future`` gets its
        ``Reply``, and the calls it makes back run in the context current here."""
        with self._lock:
            closed = self._closed
            if closed is None:
                self._pending[call_id] = future
                if self._keep_context:
                    self._contexts[call_id] = contextvars.copy_context()
        if closed is not None:
            _settle(future, ChannelClosed(closed), False)

    def report(self, frame: Direct) -> None:
        """Tell the other side of a direct call (from any thread)."""
        try:
            self._writer.write(framed(frame))
        except OSError:
            log.debug("%s: a direct call's report not sent, the other side is gone", self._name)

    def read_waiting(self) -> None:
        """Handle every frame the pipe holds now (on the loop, which reads it): what the other
        side wrote before this is handled before whatever this caller does next."""
        if self._loop is None or not self._on_loop() or not self._watched:
            return
        while not self._read_to_end.is_set() and self._readable() >= 1 << 16:
            pass

    # -- the other side's frames ------------------------------------------------------------

    def _wake_watchdog(self) -> None:
        """Calls come: the watchdog looks (started with the first; only the loop calls this)."""
        self._watched_calls = True
        self._watching.set()
        if self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch_inline, name=f"{self._name}-watchdog", daemon=True
            )
            self._watchdog.start()

    def _watch_inline(self) -> None:
        """Read the pipe for the loop while a call it serves itself lasts longer than
        ``INLINE_LIMIT`` (it was there one look ago); rest while no call comes.

        The loop takes no lock for this: it names the call it serves, then reads
        ``_watched_calls``; the watchdog clears that, then looks at the call once more."""
        seen: Call | None = None
        count, since = -1, 0.0  # the calls served as of the last look, and when that changed
        while not self._read_to_end.is_set():
            self._watching.wait()
            time.sleep(INLINE_LIMIT)
            inline, now = self._inline, time.monotonic()
            if inline is not None and inline is seen:  # held since the last look at least
                self._read_while(inline)
            seen = inline
            if self._inline_calls != count:
                count, since = self._inline_calls, now
            elif inline is None and now - since > self._watchdog_rest:
                self._watched_calls = False
                self._watching.clear()
                if self._inline is not None:  # one began meanwhile and saw it awake
                    self._watched_calls = True
                    self._watching.set()

    def _read_while(self, inline: Call) -> None:
        """Read the pipe while the loop serves ``inline`` (its calls go to threads)."""
        while self._inline is inline and not self._read_to_end.is_set():
            if not self._pump.acquire(timeout=INLINE_LIMIT):
                continue
            try:
                if self._inline is not inline or self._read_to_end.is_set():
                    return
                try:
                    fds = [self._fd_in, *self.also_read]
                    readable, _, _ = select.select(fds, [], [], INLINE_LIMIT)
                except (OSError, ValueError):  # a direct channel closed meanwhile
                    continue
                for fd in readable:
                    if fd == self._fd_in:
                        self._read_available()
                    elif (reader := self.also_read.get(fd)) is not None:
                        reader()
            finally:
                self._pump.release()

    def _answer_early(self, early: Early) -> None:
        with self._lock:
            future = self._early.pop(early.id, None)
        if future is None:
            return
        try:
            value = loads(early.payload, self.exports, self)
        except Exception as exc:  # a part that cannot be rebuilt here: as if none came
            log.warning("%s: the start of call %d could not be read: %s", self._name, early.id, exc)
            value = None
        _settle(future, value, True)

    def _answer(self, reply: Reply) -> None:
        with self._lock:
            future = self._pending.pop(reply.id, None)
            self._contexts.pop(reply.id, None)
            early = self._early.pop(reply.id, None)
        if early is not None:  # the call ended with no early part
            _settle(early, None, True)
        if future is None or future.done():
            return  # cancelled meanwhile
        try:
            value = (
                Encoded(reply.payload)
                if reply.encoded
                else loads(reply.payload, self.exports, self)
            )
        except Exception as exc:  # a value that cannot be rebuilt here fails its call
            _settle(future, RuntimeError(f"the answer could not be read here: {exc}"), False)
            return
        if reply.ok:
            _settle(future, value, True)
        else:
            error = value if isinstance(value, BaseException) else RuntimeError(str(value))
            _settle(future, error, False)

    def _arguments(self, call: Call) -> tuple[tuple, dict] | Exception:
        if call.ref is not None:
            try:
                self.exports.hold(call.ref)
            except LookupError as gone:
                return gone
        try:
            args, kwargs = loads(call.payload, self.exports, self)
        except Exception as exc:  # answered as the call's failure
            if call.ref is not None:
                self.exports.release((call.ref,))
            return exc
        if type(args) is not tuple or type(kwargs) is not dict:
            args, kwargs = tuple(args), dict(kwargs)
        return args, kwargs

    def _serve(
        self,
        call: Call,
        arguments: tuple[tuple, dict] | Exception,
        direct: DirectAnswer | None = None,
    ) -> None:
        token = serving.set(call.id)
        to_child: Encoded | None = None
        try:
            if isinstance(arguments, Exception):
                raise arguments
            value = self._handler.serve(call, *arguments)
            if type(value) is Later:  # answered when its future is (on the loop)
                value.future.add_done_callback(partial(self._answer_later, call.id, direct))
                return
            reply, to_child = self._reply(call.id, value, direct)
        except BaseException as exc:  # sys.exit, KeyboardInterrupt: answered, never fatal here
            reply = framed(Reply(call.id, False, dumps_error(exc, self.exports, self)))
        finally:
            serving.reset(token)
            self._interrupted.discard(call.id)  # each alone atomic: no lock
            self._waits.pop(call.id, None)
            if call.ref is not None and not isinstance(arguments, Exception):
                self.exports.release((call.ref,))
        self._send_reply(call.id, reply, direct, to_child)

    def _reply(
        self, call_id: int, value: Any, direct: DirectAnswer | None
    ) -> tuple[bytes, Encoded | None]:
        """The ``Reply`` frame of call ``call_id`` that returned ``value``, and what goes to
        the sandbox child directly: a packed value (alone, or first of a drawn call's answer)
        goes there when it can, the ``Reply`` then saying only that it went (:data:`SENT`)."""
        if direct is not None and direct.usable:
            if type(value) is Encoded:
                return framed(Reply(call_id, True, SENT.data, True)), value
            if type(value) is tuple and len(value) == 3 and type(value[0]) is Encoded:
                drawn = (SENT, *value[1:])  # (value, presentation, problem)
                return framed(Reply(call_id, True, dumps(drawn, self.exports, self))), value[0]
        if type(value) is Encoded:  # a tool's result, packed for the sandbox: as it is
            return framed(Reply(call_id, True, value.data, True)), None
        return framed(Reply(call_id, True, dumps(value, self.exports, self))), None

    def _send_reply(
        self, call_id: int, reply: bytes, direct: DirectAnswer | None, to_child: Encoded | None
    ) -> None:
        try:
            self._writer.write(reply)
            if self._released:
                self._send_released()
        except OSError:
            log.debug("%s: answer to call %d not sent, the other side is gone", self._name, call_id)
        if direct is not None:  # after the Reply: the host knows of the end first
            direct.answer(to_child)

    def _answer_later(
        self, call_id: int, direct: DirectAnswer | None, future: asyncio.Future[Any]
    ) -> None:
        to_child: Encoded | None = None
        try:
            if future.cancelled():
                raise asyncio.CancelledError()
            reply, to_child = self._reply(call_id, future.result(), direct)
        except BaseException as exc:  # its failure, or a value that cannot cross
            reply = framed(Reply(call_id, False, dumps_error(exc, self.exports, self)))
        self._send_reply(call_id, reply, direct, to_child)

    def _close(self, reason: str) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            pending, self._pending = self._pending, {}
            self._contexts.clear()
            early, self._early = self._early, {}
        if self._on_close is not None:  # first, so the waiting calls can say why it closed
            self._on_close()
        for future in [*early.values(), *pending.values()]:
            if not future.done():
                _settle(future, ChannelClosed(reason), False)
        for task in list(self._tasks.values()):  # nobody waits for what they serve any more
            self.soon(task.cancel)
        self.exports.clear()

    def close(self, reason: str = "the channel was closed", *, wait: float = 0.0) -> None:
        """Close the channel; with ``wait``, also let its reader see the end of its pipe (no
        thread of it reads the fd after that)."""
        self._close(reason)
        if not wait:
            return
        if self._unread():
            self._read_for(None, wait)
        self._read_to_end.wait(wait)

    # -- reading on the loop ----------------------------------------------------------------

    def _on_loop(self) -> bool:
        return _get_running_loop() is self._loop

    def _unread(self) -> bool:
        """Whether the loop will not read the pipe for a caller of this thread: there is none,
        it does not watch the fd yet, the caller blocks the loop itself, or it does not run."""
        loop = self._loop
        if loop is None:
            return True
        return not self._watched or self._on_loop() or not loop.is_running()

    def _watch(self) -> None:
        assert self._loop is not None
        if not self._read_to_end.is_set():
            self._loop.add_reader(self._fd_in, self._readable)
            self._watched = True

    def _readable(self) -> int:
        """Read what the pipe holds (on the loop); how many bytes that was."""
        if not self._pump.acquire(False):  # a caller reads meanwhile (positional: cheaper)
            return 0
        try:
            self._reading_loop = True
            read = self._read_available()
        finally:
            self._reading_loop = False
            self._pump.release()
        kept, self._kept = self._kept, None
        if kept is not None:  # served here, with the pipe free for the watchdog to read
            self._serve_inline(*kept)
        return read

    def _serve_inline(
        self, call: Call, arguments: tuple[tuple, dict], direct: DirectAnswer | None = None
    ) -> None:
        self._inline = call  # first, then whether the watchdog looks (see ``_watch_inline``)
        self._inline_calls += 1
        if not self._watched_calls:
            self._wake_watchdog()
        try:
            self._serve(call, arguments, direct)
        finally:
            self._inline = None

    def serve_direct(
        self,
        call: Call,
        arguments: tuple[tuple, dict],
        direct: DirectAnswer,
        kept: list[tuple[Call, tuple[tuple, dict], DirectAnswer]] | None = None,
    ) -> None:
        """Serve a call the sandbox child made on its direct channel (after its report) as a
        call of the other side: the loop serves it itself when the handler says so (and this
        is the loop: not the watchdog, which reads the channel while the loop serves another
        call), else a thread; its ``Reply`` goes to the other side, then ``direct`` answers.
        ``kept``: the loop reads the channel now; a call it would serve itself is kept there
        (the first only) for it to serve once the read is done, the others go to threads."""
        may_inline = self._may_inline
        if self._inline is None and may_inline is not None and self._on_loop() and may_inline(call):
            if kept is None:
                self._serve_inline(call, arguments, direct)
                return
            if not kept:
                kept.append((call, arguments, direct))
                return
        if self._serving is None:
            self._serving = ThreadPoolExecutor(self._max_threads, f"{self._name}-serving")
        self._serving.submit(self._serve, call, arguments, direct)

    def _read_for(self, future: Future[Any] | None, timeout: float) -> None:
        """Read the pipe here until ``future`` is answered (``None``: the end of the pipe),
        for at most ``timeout`` seconds (``0``: what is there now)."""
        deadline = time.monotonic() + timeout
        while not self._read_to_end.is_set() and (future is None or not future.done()):
            left = max(0.0, deadline - time.monotonic())
            if not self._pump.acquire(False):
                if not left:
                    return
                if future is not None:  # another reads the pipe now (the loop's watchdog):
                    wait_for([future], min(left, INLINE_LIMIT))  # it answers the future
                    continue
                if not self._pump.acquire(timeout=left):
                    return
            try:
                if self._read_to_end.is_set():
                    return
                readable, _, _ = select.select([self._fd_in], [], [], left)
                if readable:
                    self._read_available()
            finally:
                self._pump.release()
            if not left:
                return

    def _read_available(self) -> int:
        """Read what the pipe holds now and handle each whole frame (the pump is held); how
        many bytes were read."""
        try:
            chunk = os.read(self._fd_in, 1 << 16)
        except BlockingIOError:
            return 0
        except OSError as exc:
            self._stop_reading(f"the channel broke: {exc}")
            return 0
        if not chunk:
            partial = self._frames.partial
            self._stop_reading(
                "the channel broke: the other side closed the pipe in the middle of a frame"
                if partial
                else "the other side closed the channel"
            )
            return 0
        self._frames.feed(chunk)
        try:
            while (body := self._frames.next()) is not None:
                self._handle(decode_frame(body))
        except ProtocolError as exc:
            self._stop_reading(f"the channel broke: {exc}")
        return len(chunk)

    def _handle(self, frame: Frame) -> None:
        if isinstance(frame, Reply):
            self._answer(frame)
        elif isinstance(frame, Call):
            # read here, in frame order, so a later release cannot drop what it lends
            work = (frame, self._arguments(frame))
            if self._start is not None and self._loop_serves():
                self.soon(self._begin, *work)
                return
            if (
                self._reading_loop
                and self._kept is None
                and self._inline is None
                and self._may_inline is not None
                and type(work[1]) is tuple
                and self._may_inline(frame)
            ):
                self._kept = (frame, work[1])  # the loop serves it once the read is done
                return
            if self._serving is None:
                self._serving = ThreadPoolExecutor(self._max_threads, f"{self._name}-serving")
            self._serving.submit(self._serve, *work)
        elif isinstance(frame, Release):
            self.exports.release(frame.refs)
        elif isinstance(frame, Early):
            self._answer_early(frame)
        elif isinstance(frame, Direct):
            if self.direct_reports is not None:
                self.direct_reports(frame)
        elif self._start is not None:
            self.soon(self._cancel_task, frame.id)
        elif self._stop is not None:
            self._stop(frame.id)

    # -- serving on the loop ----------------------------------------------------------------

    def soon(self, fn: Callable[..., object], *args: Any) -> None:
        """Run ``fn(*args)`` on the loop: now when this is it, else as soon as it can."""
        loop = self._loop
        if loop is None or loop.is_closed():
            log.debug("%s: a call of the other side came with no loop to serve it", self._name)
            return
        if self._on_loop():
            fn(*args)
        else:
            loop.call_soon_threadsafe(fn, *args)

    def _loop_serves(self) -> bool:
        """Whether the loop can serve a call of the other side now: it runs, and it does not
        itself wait on the other side here (in :meth:`wait`: a task would wait for that)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        return self._reading_loop or not self._on_loop()

    def _begin(self, call: Call, arguments: tuple[tuple, dict] | Exception) -> None:
        """Start serving ``call`` as a task (on the loop); answered when it ends."""
        assert self._start is not None
        if self._closed is not None:
            return
        try:
            if isinstance(arguments, Exception):
                raise arguments
            task = self._start(call, *arguments)
        except Exception as exc:  # answered as the call's failure
            failed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            failed.set_exception(exc)
            task = failed
        self._tasks[call.id] = task
        task.add_done_callback(partial(self._served, call, type(arguments) is tuple))

    def _served(self, call: Call, holds: bool, task: asyncio.Future[Any]) -> None:
        self._tasks.pop(call.id, None)
        if holds and call.ref is not None:
            self.exports.release((call.ref,))
        self._answer_later(call.id, None, task)  # the releases queued go after its Reply

    def _cancel_task(self, call_id: int) -> None:
        task = self._tasks.get(call_id)
        if task is not None:
            task.cancel()

    def _stop_reading(self, reason: str) -> None:
        """The pipe ended or broke: close, and let the loop stop watching its fd."""
        if self._read_to_end.is_set():
            return
        self._close(reason)
        loop, fd = self._loop, self._fd_in

        def unwatch() -> None:
            if loop is not None and not loop.is_closed():
                loop.remove_reader(fd)
            os.close(fd)

        if loop is None or self._on_loop() or not loop.is_running():
            unwatch()
        else:
            loop.call_soon_threadsafe(unwatch)
        if self._serving is not None:
            self._serving.shutdown(wait=False, cancel_futures=True)
        self._read_to_end.set()
        self._watching.set()  # the watchdog ends


def _settle(future: Future[Any] | asyncio.Future[Any], value: Any, ok: bool) -> None:
    """Answer ``future`` with a value (``ok``) or an exception, from any thread."""
    if isinstance(future, asyncio.Future):
        loop = future.get_loop()
        if _get_running_loop() is not loop:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_settle, future, value, ok)
            return
    if future.done():  # cancelled meanwhile by its waiter
        return
    try:
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
    except InvalidStateError:  # cancelled by its waiter just now
        pass
