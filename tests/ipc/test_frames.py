"""One framing for every channel, read through a buffer from a real pipe: several frames in one
read, a frame in pieces, a pipe closed in the middle of one, a length over the limit; and the
worker channel's typed frames, refused when malformed."""

from __future__ import annotations

import os
import threading

import msgspec
import pytest

from vis_core.ipc.framing import FrameReader, ProtocolError, frame
from vis_core.ipc.messages import (
    Call,
    Cancel,
    Release,
    Reply,
    TargetKind,
    decode_frame,
    encode,
    framed,
)

FRAMES = [
    Call(1, TargetKind.TOOL, "echo", b"P\x80\x05args", owner="bench"),
    Reply(1, True, b"P" + bytes(range(256)) * 300),  # larger than one read of the pipe
    Cancel(2),
    Release((3, 4)),
]


def test_frames_written_at_once_are_read_one_by_one() -> None:
    read_end, write_end = os.pipe()
    data = b"".join(framed(message) for message in FRAMES)

    def write() -> None:  # more than a pipe holds: written while the reader reads
        os.write(write_end, data)
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        reader = FrameReader(1 << 20)
        bodies = [reader.read(read_end) for _ in FRAMES]
        assert [decode_frame(body) for body in bodies if body is not None] == FRAMES
        assert reader.read(read_end) is None  # the other side closed between two frames
    finally:
        writer.join()
        os.close(read_end)


def test_a_frame_fed_byte_by_byte_appears_when_whole() -> None:
    reader = FrameReader(1 << 20)
    data = framed(FRAMES[0]) + framed(FRAMES[2])
    seen = []
    for index in range(len(data)):
        reader.feed(data[index : index + 1])
        seen.extend(decode_frame(body) for body in reader.frames())
        if len(seen) < 1:
            assert reader.partial
    assert seen == [FRAMES[0], FRAMES[2]]
    assert not reader.partial


def test_a_pipe_closed_in_the_middle_of_a_frame_is_an_error() -> None:
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, framed(FRAMES[0])[:-3])
        os.close(write_end)
        with pytest.raises(ProtocolError, match="middle of a frame"):
            FrameReader(1 << 20).read(read_end)
    finally:
        os.close(read_end)


def test_a_frame_longer_than_the_limit_is_refused_from_its_length() -> None:
    reader = FrameReader(10)
    reader.feed(frame(b"x" * 10) + frame(b"y" * 11))
    assert reader.next() == b"x" * 10
    with pytest.raises(ProtocolError, match="a message longer than 10 bytes"):
        reader.next()
    assert not reader.partial  # nothing of it is kept


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1",
        encode({}),
        encode(["call", 1]),
        encode(["call", "1", "tool", "n", b"", None, None, None]),
        encode(["call", 1, "no such target", "n", b"", None, None, None]),
        encode(["reply", 1, "yes", b""]),
        encode(["what", 1]),
        encode([]),
    ],
)
def test_a_malformed_frame_is_an_error(body: bytes) -> None:
    with pytest.raises(ProtocolError, match="a frame is malformed"):
        decode_frame(body)


def test_frames_are_compact_arrays() -> None:
    assert msgspec.msgpack.decode(encode(Cancel(2))) == ["cancel", 2]
