"""One framing for every channel: a 4-byte length, then one message; size and in-flight limits."""

from __future__ import annotations

import os
import struct
import threading

HEADER = struct.Struct(">I")
#: bytes asked of one ``os.read``: it allocates the whole size first, and above ~128 KiB that is
#: an mmap and page faults on every read
READ_CHUNK = 1 << 16


class ProtocolError(Exception):
    """The other side sent what the protocol does not allow; the text says what, for a person."""


def frame(body: bytes) -> bytes:
    """``body`` as one frame: its length, then itself."""
    return HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write ``data`` to ``fd`` completely (a pipe may take a long frame in parts)."""
    written = os.write(fd, data)  # all of it, mostly: the rest only when cut short
    if written < len(data):
        rest = memoryview(data)[written:]
        while rest:
            rest = rest[os.write(fd, rest) :]


class FrameWriter:
    """Writes whole frames to one fd; safe from several threads."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        """Write encoded frames (:func:`frame`) as one piece."""
        with self._lock:
            write_all(self.fd, data)


def check_in_flight(count: int, limit: int, what: str = "tool calls") -> None:
    """Refuse one more request when ``count`` are in flight already (``limit`` at most)."""
    if count >= limit:
        raise ProtocolError(f"more than {limit:,} {what} in flight")


class FrameReader:
    """Whole frames out of the chunks read from a pipe; never buffers one longer than ``limit``.

    :meth:`feed` and :meth:`next` parse bytes read elsewhere (an event loop's reader);
    :meth:`read` blocks on an fd. Not thread-safe: one reader at a time.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # the bytes read and not parsed yet begin at ``_start``: what one read brought, parsed
        # where it lies; a growing buffer only while a frame arrives in pieces
        self._data: bytes | bytearray = b""
        self._start = 0
        self.missing = HEADER.size  # bytes still needed to complete the next frame

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

    def next(self) -> bytes | None:
        """The body of the next whole frame, or ``None`` until more bytes arrive;
        :class:`ProtocolError` when its length is over the limit (nothing of it is kept)."""
        data, start = self._data, self._start
        available = len(data) - start
        if available < HEADER.size:
            self.missing = HEADER.size - available
            return None
        (size,) = HEADER.unpack_from(data, start)
        if size > self.limit:
            self._data, self._start = b"", 0
            raise ProtocolError(f"a message longer than {self.limit:,} bytes")
        end = start + HEADER.size + size
        if end > len(data):
            self.missing = end - len(data)
            return None
        self._start = end
        body = data[start + HEADER.size : end]
        return body if type(body) is bytes else bytes(body)

    def frames(self) -> list[bytes]:
        """The bodies of every whole frame in the buffer."""
        found: list[bytes] = []
        while (body := self.next()) is not None:
            found.append(body)
        return found

    def read(self, fd: int) -> bytes | None:
        """The next body, reading ``fd`` as needed (blocking); ``None`` when the other side
        closed the pipe between two frames."""
        while (body := self.next()) is None:
            chunk = os.read(fd, min(max(self.missing, READ_CHUNK), 1 << 20))
            if not chunk:
                if self.partial:
                    raise ProtocolError("the other side closed the pipe in the middle of a frame")
                return None
            self.feed(chunk)
        return body
