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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Reply:
    """The outcome of call ``id``: ``ok`` with the pickled value, else the pickled exception."""

    id: int
    ok: bool
    payload: bytes


@dataclass(frozen=True)
class Cancel:
    """Stop call ``id``; it still answers (with ``CancelledError``) when it stops."""

    id: int


@dataclass(frozen=True)
class Release:
    """The sender dropped its proxies of these objects of the receiver (one per proxy)."""

    refs: tuple[int, ...]


Frame = Call | Reply | Cancel | Release


def encode(frame: Frame) -> bytes:
    if isinstance(frame, Call):
        envelope = {
            "k": FrameKind.CALL,
            "id": frame.id,
            "target": frame.target,
            "name": frame.name,
            "owner": frame.owner,
            "ref": frame.ref,
            "parent": frame.parent,
        }
        payload = frame.payload
    elif isinstance(frame, Reply):
        envelope, payload = {"k": FrameKind.REPLY, "id": frame.id, "ok": frame.ok}, frame.payload
    elif isinstance(frame, Release):
        envelope, payload = {"k": FrameKind.RELEASE, "id": 0, "refs": list(frame.refs)}, b""
    else:
        envelope, payload = {"k": FrameKind.CANCEL, "id": frame.id}, b""
    head = orjson.dumps(envelope)
    return _HEADER.pack(len(head), len(payload)) + head + payload


def decode(head: bytes, payload: bytes) -> Frame:
    raw = orjson.loads(head)
    if not isinstance(raw, dict):
        raise FrameError("a frame envelope must be a JSON object")
    try:
        kind = FrameKind(raw["k"])
        ident = int(raw["id"])
        if kind is FrameKind.CALL:
            return Call(
                id=ident,
                target=TargetKind(raw["target"]),
                name=str(raw["name"]),
                payload=payload,
                owner=raw.get("owner"),
                ref=raw.get("ref"),
                parent=raw.get("parent"),
            )
        if kind is FrameKind.REPLY:
            return Reply(id=ident, ok=bool(raw["ok"]), payload=payload)
        if kind is FrameKind.RELEASE:
            return Release(refs=tuple(int(ref) for ref in raw["refs"]))
        return Cancel(id=ident)
    except (KeyError, ValueError, TypeError) as exc:
        raise FrameError(f"a frame envelope is malformed: {exc}") from None


class FrameWriter:
    """Writes whole frames to one fd; safe from several threads."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def send(self, frame: Frame) -> None:
        data = memoryview(encode(frame))
        with self._lock:
            while data:
                written = os.write(self._fd, data)
                data = data[written:]


class FrameReader:
    """Reads frames from one fd through a buffer: one ``read`` brings in whatever the other
    side wrote (often several frames), and a frame may arrive in pieces.

    :meth:`feed` and :meth:`frames` parse bytes read elsewhere (an event loop's reader);
    :meth:`read` blocks on the fd. Not thread-safe: one reader at a time.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._start = 0  # where the first unparsed frame begins in the buffer

    @property
    def partial(self) -> bool:
        """Whether part of a frame was read and the rest has not arrived."""
        return self._start < len(self._buffer)

    def feed(self, data: bytes) -> None:
        if self._start and self._start == len(self._buffer):
            self._buffer.clear()
            self._start = 0
        self._buffer += data

    def _missing(self) -> int:
        """Bytes still needed to complete the next frame (at least its header)."""
        available = len(self._buffer) - self._start
        if available < _HEADER.size:
            return _HEADER.size - available
        head_size, payload_size = _HEADER.unpack_from(self._buffer, self._start)
        if head_size + payload_size > MAX_FRAME:
            raise FrameError(f"a frame of {head_size + payload_size} bytes is larger than allowed")
        return max(0, _HEADER.size + head_size + payload_size - available)

    def next(self) -> Frame | None:
        """The next whole frame in the buffer, or ``None`` until more bytes arrive."""
        if self._missing():
            return None
        buffer, start = self._buffer, self._start
        head_size, payload_size = _HEADER.unpack_from(buffer, start)
        head_at = start + _HEADER.size
        payload_at = head_at + head_size
        end = payload_at + payload_size
        frame = decode(bytes(buffer[head_at:payload_at]), bytes(buffer[payload_at:end]))
        if end == len(buffer):
            buffer.clear()
            self._start = 0
        elif end > 1 << 16:  # drop what was parsed before the buffer grows much
            del buffer[:end]
            self._start = 0
        else:
            self._start = end
        return frame

    def frames(self) -> list[Frame]:
        """Every whole frame in the buffer."""
        found: list[Frame] = []
        while (frame := self.next()) is not None:
            found.append(frame)
        return found

    def read(self) -> Frame | None:
        """The next frame, reading the fd as needed (blocking); ``None`` when the other side
        closed the pipe between two frames."""
        while True:
            frame = self.next()
            if frame is not None:
                return frame
            chunk = os.read(self._fd, min(max(self._missing(), 1 << 16), 1 << 20))
            if not chunk:
                if self.partial:
                    raise FrameError("the other side closed the pipe in the middle of a frame")
                return None
            self.feed(chunk)
