"""Typed frames between the host and a session's extension worker, and their binary codec.

A frame is ``>II`` (envelope length, payload length), an orjson envelope naming the frame kind
and its ids, then the raw payload (pickled values, see :mod:`worker_values`). Either side
sends every kind: the host calls tools in the worker, the worker calls SDK services in the host.
"""

from __future__ import annotations

import os
import struct
import threading
from dataclasses import dataclass
from enum import StrEnum

import orjson

_HEADER = struct.Struct(">II")
MAX_FRAME = 256 << 20  # bounds a corrupt length, not a real message


class FrameError(RuntimeError):
    """The other side sent something that is not a frame (or closed mid-frame)."""


class FrameKind(StrEnum):
    CALL = "call"
    REPLY = "reply"
    CANCEL = "cancel"
    RELEASE = "release"


class TargetKind(StrEnum):
    """What a :class:`Call` runs: a tool, an op hook or a slash command of an extension, a
    named SDK service, an exported object, a declaration's callback (:class:`CallbackKind`,
    the call's name), or the worker's own setup (loading the session's extensions)."""

    TOOL = "tool"
    DRAWN_TOOL = "drawn_tool"  # a tool, then its render of success: (value, drawn, problem)
    HOOK = "hook"
    COMMAND = "command"
    CALLBACK = "callback"
    SDK = "sdk"
    OBJECT = "object"
    LOAD = "load"


class CallbackKind(StrEnum):
    """Which callback of an extension's declaration a ``CALLBACK`` call runs; its first
    argument names the setting (``ON_CHANGE``) or the tool (``RENDER``), else is empty."""

    PROMPT = "prompt"
    ACTIVATION = "activation"
    CTX = "ctx"
    ON_CHANGE = "on_change"
    RENDER = "render"
    PROVIDER = "provider"  # a vis.Provider's stream: (request, sink), the key names it
    NETWORK_FILTER = "network_filter"  # a vis.NetworkFilter: (phase, request or response)


# frames are made for every call both ways: plain slotted classes (a frozen dataclass costs
# five times as much to make)
@dataclass(slots=True)
class Call:
    """Run ``target`` with the pickled ``(args, kwargs)`` in ``payload``.

    ``name`` is the tool (``owner``'s ``name``), the SDK service or the method of the object
    ``ref``; ``parent`` is the call of the other side this one is made from (its context)."""

    id: int
    target: TargetKind
    name: str
    payload: bytes
    owner: str | None = None
    ref: int | None = None
    parent: int | None = None


@dataclass(slots=True)
class Reply:
    """The outcome of call ``id``: ``ok`` with the pickled value, else the pickled exception."""

    id: int
    ok: bool
    payload: bytes


@dataclass(slots=True)
class Cancel:
    """Stop call ``id``; it still answers (with ``CancelledError``) when it stops."""

    id: int


@dataclass(slots=True)
class Release:
    """The sender dropped its proxies of these objects of the receiver (one per proxy)."""

    refs: tuple[int, ...]


Frame = Call | Reply | Cancel | Release

# the envelope is a JSON array: the kind, then the frame's fields in order
_TARGETS = {kind.value: kind for kind in TargetKind}


def encode(frame: Frame) -> bytes:
    if isinstance(frame, Call):
        return encode_call(
            frame.id,
            frame.target,
            frame.name,
            frame.payload,
            frame.owner,
            frame.ref,
            frame.parent,
        )
    if isinstance(frame, Reply):
        return encode_reply(frame.id, frame.ok, frame.payload)
    if isinstance(frame, Release):
        return _frame(orjson.dumps([FrameKind.RELEASE, list(frame.refs)]), b"")
    return _frame(orjson.dumps([FrameKind.CANCEL, frame.id]), b"")


# a call and its reply are encoded from their fields, with no frame object made to send them


def encode_call(
    ident: int,
    target: TargetKind,
    name: str,
    payload: bytes,
    owner: str | None = None,
    ref: int | None = None,
    parent: int | None = None,
) -> bytes:
    """The :class:`Call` frame of these fields."""
    head = orjson.dumps([FrameKind.CALL, ident, target, name, owner, ref, parent])
    return _HEADER.pack(len(head), len(payload)) + head + payload


def encode_reply(ident: int, ok: bool, payload: bytes) -> bytes:
    """The :class:`Reply` frame of these fields."""
    head = orjson.dumps([FrameKind.REPLY, ident, ok])
    return _HEADER.pack(len(head), len(payload)) + head + payload


def _frame(head: bytes, payload: bytes) -> bytes:
    return _HEADER.pack(len(head), len(payload)) + head + payload


def decode(head: bytes | bytearray, payload: bytes) -> Frame:
    try:
        raw = orjson.loads(head)
        kind = raw[0]
        if kind == FrameKind.CALL:
            _, ident, target, name, owner, ref, parent = raw
            if not (
                type(ident) is int
                and type(name) is str
                and (owner is None or type(owner) is str)
                and (ref is None or type(ref) is int)
                and (parent is None or type(parent) is int)
            ):
                raise TypeError("a call's fields have the wrong types")
            return Call(ident, _TARGETS[target], name, payload, owner, ref, parent)
        if kind == FrameKind.REPLY:
            _, ident, ok = raw
            if type(ident) is not int or type(ok) is not bool:
                raise TypeError("a reply's fields have the wrong types")
            return Reply(ident, ok, payload)
        if kind == FrameKind.RELEASE:
            return Release(tuple(int(ref) for ref in raw[1]))
        if kind == FrameKind.CANCEL and type(raw[1]) is int:
            return Cancel(raw[1])
        raise ValueError(f"unknown frame {kind!r}")
    except (orjson.JSONDecodeError, KeyError, IndexError, ValueError, TypeError) as exc:
        raise FrameError(f"a frame envelope is malformed: {exc}") from None


class FrameWriter:
    """Writes whole frames to one fd; safe from several threads."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def send(self, frame: Frame) -> None:
        self.write(encode(frame))

    def write(self, data: bytes) -> None:
        """Write encoded frames (:func:`encode`, :func:`encode_call`, :func:`encode_reply`)."""
        with self._lock:
            written = os.write(self._fd, data)
            if written < len(data):  # a pipe takes a large frame in parts
                rest = memoryview(data)[written:]
                while rest:
                    rest = rest[os.write(self._fd, rest) :]


class FrameReader:
    """Reads frames from one fd through a buffer: one ``read`` brings in whatever the other
    side wrote (often several frames), and a frame may arrive in pieces.

    :meth:`feed` and :meth:`frames` parse bytes read elsewhere (an event loop's reader);
    :meth:`read` blocks on the fd. Not thread-safe: one reader at a time.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        # the bytes read and not parsed yet begin at ``_start``: what one read brought, parsed
        # where it lies; a growing buffer only while a frame arrives in pieces
        self._data: bytes | bytearray = b""
        self._start = 0
        self._missing = _HEADER.size  # bytes still needed to complete the next frame

    @property
    def partial(self) -> bool:
        """Whether part of a frame was read and the rest has not arrived."""
        return self._start < len(self._data)

    def feed(self, data: bytes) -> None:
        start = self._start
        if start == len(self._data):
            self._data, self._start = data, 0
            return
        rest = self._data
        if isinstance(rest, bytes):
            rest = bytearray(memoryview(rest)[start:])
            self._start = 0
        elif start > 1 << 16:  # drop what was parsed before the buffer grows much
            del rest[:start]
            self._start = 0
        rest += data
        self._data = rest

    def next(self) -> Frame | None:
        """The next whole frame in the buffer, or ``None`` until more bytes arrive."""
        data, start = self._data, self._start
        available = len(data) - start
        if available < _HEADER.size:
            self._missing = _HEADER.size - available
            return None
        head_size, payload_size = _HEADER.unpack_from(data, start)
        if head_size + payload_size > MAX_FRAME:
            raise FrameError(f"a frame of {head_size + payload_size} bytes is larger than allowed")
        head_at = start + _HEADER.size
        payload_at = head_at + head_size
        end = payload_at + payload_size
        if end > len(data):
            self._missing = end - len(data)
            return None
        self._start = end
        payload = data[payload_at:end]
        return decode(
            data[head_at:payload_at], payload if type(payload) is bytes else bytes(payload)
        )

    def frames(self) -> list[Frame]:
        """Every whole frame in the buffer."""
        found: list[Frame] = []
        while (frame := self.next()) is not None:
            found.append(frame)
        return found

    def read(self) -> Frame | None:
        """The next frame, reading the fd as needed (blocking); ``None`` when the other side
        closed the pipe between two frames."""
        while (frame := self.next()) is None:
            chunk = os.read(self._fd, min(max(self._missing, 1 << 16), 1 << 20))
            if not chunk:
                if self.partial:
                    raise FrameError("the other side closed the pipe in the middle of a frame")
                return None
            self.feed(chunk)
        return frame
