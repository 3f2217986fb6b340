"""One side of the frame channel between the host and an extension worker: calls both ways.

Each side numbers its own calls, waits on them with futures, and serves the other side's
calls on threads of its own. The threads take turns reading the pipe: the one that reads a
call serves it itself, right away, and hands the reading to an idle thread first (a call may
block on a call back or hang until cancelled, so the pipe is never left unread).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from vis_core.extension_host.worker_frames import (
    Call,
    Cancel,
    FrameError,
    FrameReader,
    FrameWriter,
    Release,
    Reply,
    TargetKind,
)
from vis_core.extension_host.worker_values import Exports, dumps, dumps_error, loads

log = logging.getLogger(__name__)
MAX_THREADS = 256  # calls served at once (a hung tool holds one until its worker restarts)
IDLE_THREADS = 4  # threads kept waiting for a call after a burst of them (the rest end)

# the other side's call this thread serves, sent as ``parent`` with calls made from it
serving: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "vis_worker_serving", default=None
)


class ChannelClosed(RuntimeError):
    """The other side is gone; the call will not be answered."""


class Handler(Protocol):
    """What one side does with the other side's calls."""

    def serve(self, call: Call, args: tuple, kwargs: dict) -> Any: ...

    def cancel(self, call_id: int) -> None: ...


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
    ) -> None:
        self.exports = Exports()
        self._fd_in = fd_in
        self._writer = FrameWriter(fd_out)
        self._handler = handler
        self._name = name
        self._on_close = on_close
        self._pending: dict[int, Future[Any]] = {}
        # the context each outgoing call was made in, so calls made back from it run there
        self._keep_context = keep_context
        self._contexts: dict[int, contextvars.Context] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._closed: str | None = None
        self._released: deque[int] = deque()  # proxies dropped here, told with the next frame
        self._frames = FrameReader(fd_in)
        self._reading = threading.Lock()  # held by the thread whose turn it is to read
        self._threads = 0  # threads of this channel
        self._idle = 0  # of them, those not serving a call (reading or waiting to)
        self._backlog: deque[tuple[Call, tuple[tuple, dict] | Exception]] = deque()
        self._read_to_end = threading.Event()  # no thread reads the pipe any more
        self._turn: int | None = None  # the thread reading now

    def start(self) -> None:
        self._add_thread()

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
        """Send a call; its id and the future of its answer."""
        payload = dumps((args, kwargs or {}), self.exports, self)
        future: Future[Any] = Future()
        with self._lock:
            if self._closed is not None:
                raise ChannelClosed(self._closed)
            call_id = next(self._ids)
            self._pending[call_id] = future
            if self._keep_context:
                self._contexts[call_id] = contextvars.copy_context()
        frame = Call(call_id, target, name, payload, owner=owner, ref=ref, parent=parent)
        try:
            self._send_released()
            self._writer.send(frame)
        except OSError as exc:
            with self._lock:
                self._pending.pop(call_id, None)
                self._contexts.pop(call_id, None)
            raise ChannelClosed(f"the extension worker is gone ({exc})") from None
        return call_id, future

    def call(
        self,
        target: TargetKind,
        name: str,
        args: tuple = (),
        kwargs: dict | None = None,
        **where: Any,
    ) -> Any:
        """Make a call and wait for its answer (from a thread, never from the event loop)."""
        where.setdefault("parent", serving.get())
        _, future = self.request(target, name, args, kwargs, **where)
        while True:  # short waits, so a cancelled tool's thread can be interrupted meanwhile
            try:
                return future.result(0.2)
            except TimeoutError:
                continue

    def call_object(self, ref: int, method: str, args: tuple, kwargs: dict) -> Any:
        return self.call(TargetKind.OBJECT, method, args, kwargs, ref=ref)

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
            self._writer.send(Release(tuple(refs)))

    def cancel(self, call_id: int) -> None:
        """Ask the other side to stop call ``call_id`` (it answers when it stopped)."""
        try:
            self._writer.send(Cancel(call_id))
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

    # -- the other side's frames ------------------------------------------------------------

    def _add_thread(self) -> None:
        """One more thread, idle: it waits for its turn to read (the caller counted it)."""
        with self._lock:
            self._threads += 1
            self._idle += 1
            number = self._threads
        thread = threading.Thread(target=self._take_turns, name=f"{self._name}-{number}")
        thread.daemon = True
        thread.start()

    def _take_turns(self) -> None:
        """Read frames while it is this thread's turn, up to a call; hand the reading on and
        serve the call here; then wait for the next turn (or end, when enough others wait)."""
        while True:
            with self._reading:
                if self._read_to_end.is_set():
                    break
                self._turn = threading.get_ident()
                try:
                    work = self._read_call()
                except (FrameError, OSError) as exc:
                    self._read_to_end.set()
                    self._close(f"the channel broke: {exc}")
                    break
                if work is None:
                    self._read_to_end.set()
                    self._close("the other side closed the channel")
                    break
                with self._lock:
                    self._idle -= 1
                    alone = self._idle == 0
                if alone:
                    self._add_thread()  # it reads while this one serves
            self._serve(*work)
            while True:  # calls read while every thread served one, then idle again
                with self._lock:
                    if not self._backlog:
                        if self._idle >= IDLE_THREADS:
                            self._threads -= 1
                            return
                        self._idle += 1
                        break
                    work = self._backlog.popleft()
                self._serve(*work)
        with self._lock:
            self._threads -= 1
            self._idle -= 1

    def _read_call(self) -> tuple[Call, tuple[tuple, dict] | Exception] | None:
        """Handle the frames read up to the next call of the other side, and return that
        call with its arguments; ``None`` at the end of the pipe."""
        while True:
            frame = self._frames.read()
            if frame is None:
                return None
            if isinstance(frame, Reply):
                self._answer(frame)
            elif isinstance(frame, Call):
                # read here, in frame order, so a later release cannot drop what it lends
                work = (frame, self._arguments(frame))
                with self._lock:
                    if self._idle > 1 or self._threads < MAX_THREADS:
                        return work
                    self._backlog.append(work)  # every thread serves: the first done takes it
            elif isinstance(frame, Release):
                self.exports.release(frame.refs)
            else:
                self._handler.cancel(frame.id)

    def _answer(self, reply: Reply) -> None:
        with self._lock:
            future = self._pending.pop(reply.id, None)
            self._contexts.pop(reply.id, None)
        if future is None or future.done():
            return  # cancelled meanwhile
        try:
            value = loads(reply.payload, self.exports, self)
        except Exception as exc:  # a value that cannot be rebuilt here fails its call
            future.set_exception(RuntimeError(f"the answer could not be read here: {exc}"))
            return
        if reply.ok:
            future.set_result(value)
        else:
            future.set_exception(
                value if isinstance(value, BaseException) else RuntimeError(str(value))
            )

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
        return tuple(args), dict(kwargs)

    def _serve(self, call: Call, arguments: tuple[tuple, dict] | Exception) -> None:
        token = serving.set(call.id)
        try:
            if isinstance(arguments, Exception):
                raise arguments
            args, kwargs = arguments
            value = self._handler.serve(call, args, kwargs)
            reply = Reply(call.id, True, dumps(value, self.exports, self))
        except BaseException as exc:  # sys.exit, KeyboardInterrupt: answered, never fatal here
            reply = Reply(call.id, False, dumps_error(exc, self.exports, self))
        finally:
            serving.reset(token)
            if call.ref is not None and not isinstance(arguments, Exception):
                self.exports.release((call.ref,))
        try:
            self._writer.send(reply)
            self._send_released()
        except OSError:
            log.debug("%s: answer to call %d not sent, the other side is gone", self._name, call.id)

    def _close(self, reason: str) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            pending, self._pending = self._pending, {}
            self._contexts.clear()
        if self._on_close is not None:  # first, so the waiting calls can say why it closed
            self._on_close()
        for future in pending.values():
            if not future.done():
                future.set_exception(ChannelClosed(reason))
        self.exports.clear()
        self._backlog.clear()

    def close(self, reason: str = "the channel was closed", *, wait: float = 0.0) -> None:
        """Close the channel; with ``wait``, also let its reader see the end of its pipe (no
        thread of it reads the fd after that)."""
        self._close(reason)
        if wait and self._turn != threading.get_ident():
            self._read_to_end.wait(wait)
