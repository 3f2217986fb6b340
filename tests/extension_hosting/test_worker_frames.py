"""Frames between the host and an extension worker, read through a buffer from a real pipe:
several frames in one read, a frame in pieces, and a pipe closed in the middle of one."""

from __future__ import annotations

import os
import struct
import threading

import pytest

from vis_core.extension_host.worker_frames import (
    Call,
    Cancel,
    FrameError,
    FrameReader,
    Release,
    Reply,
    TargetKind,
    encode,
)

FRAMES = [
    Call(1, TargetKind.TOOL, "echo", b"P\x80\x05args", owner="bench"),
    Reply(1, True, b"P" + bytes(range(256)) * 300),  # larger than one read of the pipe
    Cancel(2),
    Release((3, 4)),
]


def test_frames_written_at_once_are_read_one_by_one() -> None:
    read_end, write_end = os.pipe()
    data = b"".join(encode(frame) for frame in FRAMES)

    def write() -> None:  # more than a pipe holds: written while the reader reads
        os.write(write_end, data)
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        reader = FrameReader(read_end)
        assert [reader.read() for _ in FRAMES] == FRAMES
        assert reader.read() is None  # the other side closed between two frames
    finally:
        writer.join()
        os.close(read_end)


def test_a_frame_fed_byte_by_byte_appears_when_whole() -> None:
    reader = FrameReader(-1)
    data = encode(FRAMES[0]) + encode(FRAMES[2])
    seen = []
    for index in range(len(data)):
        reader.feed(data[index : index + 1])
        seen.extend(reader.frames())
        if len(seen) < 1:
            assert reader.partial
    assert seen == [FRAMES[0], FRAMES[2]]
    assert not reader.partial


def test_a_pipe_closed_in_the_middle_of_a_frame_is_an_error() -> None:
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, encode(FRAMES[0])[:-3])
        os.close(write_end)
        with pytest.raises(FrameError, match="middle of a frame"):
            FrameReader(read_end).read()
    finally:
        os.close(read_end)


@pytest.mark.parametrize(
    "envelope",
    [
        b"not json",
        b"{}",
        b'["call", 1]',
        b'["call", "1", "tool", "n", null, null, null]',
        b'["call", 1, "no such target", "n", null, null, null]',
        b'["reply", 1, "yes"]',
        b'["what", 1]',
        b"[]",
    ],
)
def test_a_malformed_envelope_is_an_error(envelope: bytes) -> None:
    reader = FrameReader(-1)
    reader.feed(struct.pack(">II", len(envelope), 0) + envelope)
    with pytest.raises(FrameError, match="envelope is malformed"):
        reader.next()
