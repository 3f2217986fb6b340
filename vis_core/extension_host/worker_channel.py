"""One side of the frame channel between the host and an extension worker: calls both ways.

Each side numbers its own calls, waits on them with futures, and serves the other side's
calls on a thread pool (a call may block on a call back, so the reader never runs one).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from vis_core.extension_host.worker_frames import (
    Call,
    Cancel,
    FrameError,
    FrameWriter,
    Release,
    Reply,
    TargetKind,
    read_frame,
)
from vis_core.extension_host.worker_values import Exports, dumps, dumps_error, loads

log = logging.getLogger(__name__)
MAX_THREADS = 256  # calls served at once (a hung tool holds one until its worker restarts)

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
        self._pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix=name)
        self._reader = threading.Thread(target=self._read, name=f"{name}-reader", daemon=True)

    def start(self) -> None:
        self._reader.start()

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

    def _read(self) -> None:
        reason = "the other side closed the channel"
        try:
            while True:
                frame = read_frame(self._fd_in)
                if frame is None:
                    break
                if isinstance(frame, Reply):
                    self._answer(frame)
                elif isinstance(frame, Call):
                    # read here, in frame order, so a later release cannot drop what it lends
                    self._pool.submit(self._serve, frame, self._arguments(frame))
                elif isinstance(frame, Release):
                    self.exports.release(frame.refs)
                else:
                    self._handler.cancel(frame.id)
        except (FrameError, OSError) as exc:
            reason = f"the channel broke: {exc}"
        self._close(reason)

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
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self, reason: str = "the channel was closed", *, wait: float = 0.0) -> None:
        """Close the channel; with ``wait``, also let the reader see the end of its pipe."""
        self._close(reason)
        if wait and self._reader.is_alive() and self._reader is not threading.current_thread():
            self._reader.join(wait)
