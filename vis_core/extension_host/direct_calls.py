"""The worker's side of the sandbox child's direct channel: the child's calls of the tools the
host granted, answered without the host in between.

The host hands the worker, on its control socket (:mod:`~vis_core.ipc.pairing`), the fd of a
channel whose other end it gave the sandbox child, and the tools it may answer there
(:class:`~vis_core.ipc.messages.DirectGrants`, sent again whenever they change: plan mode, an
extension waiting on the turn). The child runs the model's code, so the worker reads that
channel as the host reads the child: the framing's size limit, at most ``max_calls`` in
flight, a call or a cancel and nothing else, values by the untrusted policy
(:mod:`vis_core.ipc.values`). A call of a tool not granted, or with an argument only the host
reads (a host handle), is :class:`~vis_core.ipc.messages.Refused`: the child makes it through
the host. Anything else closes the channel; the child then calls through the host.

Each call is reported to the host (:class:`~vis_core.ipc.messages.Direct`) before it runs, so
the host records its Activity and knows its context before any SDK call of it; its ``Reply``
goes to the host before its answer goes to the child, and the host reads what the worker wrote
before it handles anything more of the child: Activities are stored in the order they ended.
The grants are read before each of the child's frames, so a tool the host revoked before the
child wrote is refused. A cancel from the child, or its channel's end, is reported to the host,
which cancels the call as it would its own. While the worker's loop runs a call itself (a plain
function's tool), the channel's watchdog reads the direct channel too, as it reads the host's:
the calls it finds there go to threads, so a tool that waits for another one's call is let go.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
import threading
from typing import Any

import msgspec

from vis_core.extension_host.worker_channel import Channel
from vis_core.ipc import values as wire
from vis_core.ipc.encoded import Encoded
from vis_core.ipc.framing import READ_CHUNK, FrameReader, ProtocolError, check_in_flight
from vis_core.ipc.kinds import TargetKind
from vis_core.ipc.messages import (
    Call,
    CancelCall,
    Direct,
    DirectGrants,
    Refused,
    Result,
    ToolCall,
    direct_from_child,
    framed,
)
from vis_core.ipc.pairing import ControlReader

log = logging.getLogger(__name__)
#: bytes of answers the child has not read yet that the worker keeps; past it the channel ends
MAX_UNREAD = 64 << 20
_grants_decoder = msgspec.msgpack.Decoder(DirectGrants)


class DirectCalls:
    """The direct channel of one worker: its grants, and the channel the host paired last."""

    def __init__(
        self,
        channel: Channel,
        loop: asyncio.AbstractEventLoop,
        control: int,
    ) -> None:
        """``channel``: the host's; ``control``: the worker's control socket."""
        self.channel = channel
        self.loop = loop
        self.message_limit = 0  # as the host holds the sandbox child to (its grants say)
        self.max_calls = 0
        self._control: ControlReader | None = ControlReader(control)
        self._control_lock = threading.Lock()  # the loop reads it, or the channel's watchdog
        self.grants: dict[str, tuple[str, str, bool]] = {}
        self.line: DirectLine | None = None
        self._ids = itertools.count(-1, -1)  # the worker's numbers: the host's are positive
        loop.add_reader(control, self.read_control)

    def next_id(self) -> int:
        return next(self._ids)

    def read_control(self) -> None:
        """Take what the host sent on the control socket: grants, and a new channel's fd."""
        with self._control_lock:
            control = self._control
            if control is None:
                return
            notes = control.receive()
            if notes is None:  # the host is gone (the worker ends with its channel)
                self._control = None
                self.channel.soon(self._closed_control, control)
                return
            self._take_notes(notes)

    def _closed_control(self, control: ControlReader) -> None:
        self.loop.remove_reader(control.fileno())
        control.close()

    def _take_notes(self, notes: list[tuple[bytes, int | None]]) -> None:
        for note, fd in notes:
            try:
                granted = _grants_decoder.decode(note)
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                log.warning("the host's direct grants could not be read: %s", exc)
                granted = DirectGrants({}, 0, 0)
            self.grants = dict(granted.grants)
            self.message_limit, self.max_calls = granted.message_limit, granted.max_calls
            if fd is not None:
                if self.line is not None:
                    self.line.end(child_gone=True)  # the child it served was replaced
                self.line = DirectLine(self, fd, granted.line)
                self.channel.soon(self.line.watch)


class DirectLine:
    """One direct channel with a sandbox child: its calls in flight (by the child's id), and
    the answers it has not taken yet."""

    def __init__(self, calls: DirectCalls, fd: int, number: int) -> None:
        self._calls = calls
        self.number = number  # the host's: a report of a call of an earlier child is known
        self._socket = socket.socket(fileno=fd)
        self._socket.setblocking(False)
        self._fd = fd
        self._frames = FrameReader(calls.message_limit)
        # the child's call id -> (the worker's, owner, tool)
        self.in_flight: dict[int, tuple[int, str, str]] = {}
        self._unsent = bytearray()
        self._lock = threading.Lock()  # answers are written from the threads calls run on
        self._reading = threading.Lock()  # the loop reads, or the watchdog while it cannot
        self.broken = False

    def watch(self) -> None:
        """Read the channel on the loop, and in the channel's watchdog while the loop runs a
        call itself (on the loop)."""
        if self.broken:
            return
        self._calls.loop.add_reader(self._fd, self._readable)
        self._calls.channel.also_read[self._fd] = self._readable

    # -- reading ---------------------------------------------------------------------------

    def _readable(self) -> None:
        if not self._reading.acquire(False):  # the other reader has it
            return
        kept: list[tuple[Call, tuple[tuple, dict], _Answer]] = []
        try:
            self._calls.read_control()  # what the host granted or revoked before the child wrote
            if self.broken:
                return
            try:
                chunk = self._socket.recv(READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.end(child_gone=True)
                return
            try:
                self._frames.feed(chunk)
                while not self.broken and (body := self._frames.next()) is not None:
                    self._take(direct_from_child(body), kept)
            except ProtocolError as exc:
                log.warning("the sandbox child broke its direct channel (%s): it is closed", exc)
                self.end(child_gone=False)
        finally:
            self._reading.release()
        for call, arguments, answer in kept:  # the watchdog reads meanwhile, if it lasts
            self._calls.channel.serve_direct(call, arguments, answer)

    def _take(self, message: ToolCall | CancelCall, kept: list[Any]) -> None:
        calls = self._calls
        if type(message) is CancelCall:
            running = self.in_flight.get(message.id)
            if running is not None:  # the host cancels it, as it would its own call
                call_id, owner, name = running
                calls.channel.report(
                    Direct(call_id, message.id, owner, name, cancelled=True, line=self.number)
                )
            return
        assert isinstance(message, ToolCall)
        rid = message.id
        check_in_flight(len(self.in_flight), calls.max_calls)
        if rid in self.in_flight:
            raise ProtocolError(f"a second call {rid} while the first is in flight")
        grant = calls.grants.get(message.name)
        if grant is None:
            self.write(framed(Refused(rid)))
            return
        try:
            args = wire.decode(message.args, handle_in=_host_handle)
            kwargs = wire.decode(message.kwargs, handle_in=_host_handle) if message.kwargs else {}
            if type(args) is not list or type(kwargs) is not dict:
                raise TypeError("arguments that are not a list and a dict")
        except Exception:  # a handle, or what only the host says a word on: its route
            self.write(framed(Refused(rid)))
            return
        owner, name, drawn = grant
        call_id = calls.next_id()
        self.in_flight[rid] = (call_id, owner, name)
        payload = b""
        if drawn:  # the host draws a failure with them
            from vis_core.ipc.trusted import dumps_arguments

            channel = calls.channel
            payload = dumps_arguments(tuple(args), kwargs, channel.exports, channel)
        calls.channel.report(Direct(call_id, rid, owner, name, payload=payload, line=self.number))
        target = TargetKind.DRAWN_TOOL if drawn else TargetKind.TOOL
        call = Call(call_id, target, name, b"", owner)
        calls.channel.serve_direct(call, (tuple(args), kwargs), _Answer(self, rid), kept)

    # -- writing ---------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Send ``data`` to the child without waiting (from any thread): what it does not
        take now is kept and sent as it reads, up to ``MAX_UNREAD`` bytes."""
        with self._lock:
            if self.broken:
                return
            if not self._unsent:
                try:
                    sent = self._socket.send(data)
                except BlockingIOError:
                    sent = 0
                except OSError:
                    self._calls.channel.soon(self.end, True)
                    return
                if sent == len(data):
                    return
                data = data[sent:]
                self._calls.channel.soon(self._watch_writable)
            self._unsent += data
            if len(self._unsent) > MAX_UNREAD:  # a child that does not read its answers
                self._calls.channel.soon(self.end, False)

    def _watch_writable(self) -> None:
        if not self.broken:
            self._calls.loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        with self._lock:
            try:
                sent = self._socket.send(self._unsent) if self._unsent else 0
            except BlockingIOError:
                return
            except OSError:
                sent = -1
            if sent >= 0:
                del self._unsent[:sent]
            if self._unsent and sent >= 0:
                return
        self._calls.loop.remove_writer(self._fd)
        if sent < 0:
            self.end(child_gone=True)

    def end(self, child_gone: bool) -> None:
        """Close the channel (from any thread). ``child_gone``: the child ended it (or was
        replaced), so the host is told to cancel its calls in flight; else the worker ended
        it, and those calls answer through the host, which the child then asks."""
        with self._lock:
            if self.broken:
                return
            self.broken = True
        self._calls.channel.also_read.pop(self._fd, None)
        self._calls.channel.soon(self._close)
        if self._calls.line is self:
            self._calls.line = None
        if child_gone:
            for rid, (call_id, owner, name) in list(self.in_flight.items()):
                cancelled = Direct(call_id, rid, owner, name, cancelled=True, line=self.number)
                self._calls.channel.report(cancelled)

    def _close(self) -> None:
        loop = self._calls.loop
        loop.remove_reader(self._fd)
        loop.remove_writer(self._fd)
        self._socket.close()


class _Answer:
    """Where the answer of the child's call ``rid`` goes (see
    :class:`~vis_core.extension_host.worker_channel.DirectAnswer`)."""

    __slots__ = ("_line", "_rid")

    def __init__(self, line: DirectLine, rid: int) -> None:
        self._line = line
        self._rid = rid

    @property
    def usable(self) -> bool:
        return not self._line.broken

    def answer(self, value: Encoded | None) -> None:
        line = self._line
        line.in_flight.pop(self._rid, None)
        if value is not None:
            line.write(framed(Result(self._rid, True, msgspec.Raw(value.data))))


def _host_handle(ref: dict[str, Any]) -> Any:
    raise LookupError("a host handle: only the host reads it")
