"""Messages between the host and an extension worker: a 4-byte length, then one orjson object."""

from __future__ import annotations

import os
import struct
from typing import Any

import orjson

_HEADER = struct.Struct(">I")
MAX_FRAME = 64 << 20  # a declaration report is small; this only bounds a corrupt length


class FrameError(RuntimeError):
    """The other side sent something that is not a frame (or closed mid-frame)."""


def encode(message: dict[str, Any]) -> bytes:
    body = orjson.dumps(message)
    return _HEADER.pack(len(body)) + body


def write_frame(fd: int, message: dict[str, Any]) -> None:
    """Write one message to ``fd`` completely."""
    data = memoryview(encode(message))
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            if chunks:
                raise FrameError("the other side closed the pipe in the middle of a message")
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict[str, Any] | None:
    """The next message on ``fd``, or ``None`` when the other side closed the pipe."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise FrameError(f"a message of {size} bytes is larger than the {MAX_FRAME} allowed")
    body = _read_exactly(fd, size) if size else b""
    if body is None:
        raise FrameError("the other side closed the pipe in the middle of a message")
    message = orjson.loads(body)
    if not isinstance(message, dict):
        raise FrameError("a message must be a JSON object")
    return message
