"""A child that breaks the protocol (its code is untrusted): the host stops it and says so,
never crashes or hangs, and the next block runs in a new child."""

from __future__ import annotations

import asyncio
import inspect
import re
import struct
from typing import Any

import msgspec
import pytest

from vis_core.ipc.framing import FrameReader, ProtocolError, frame
from vis_core.ipc.messages import CancelCall, framed, from_child
from vis_core.sandbox import Sandbox
from vis_core.sandbox.protocol import MAX_MESSAGE_BYTES, MAX_SNAPSHOT_BYTES

from .conftest import HostTools, MakeSandbox

# Block code that writes ``data`` on the child's own protocol pipe, as hostile code can.
WRITE = (
    "import gc, os\n"
    "gc.unfreeze()\n"  # what the child froze at its start is there to find again
    "child = next(o for o in gc.get_objects() if type(o).__name__ == 'Child')\n"
    "os.write(child.fd_out, {data!r})\n"
)


def message(*fields: Any) -> bytes:
    """One frame of MessagePack holding ``fields`` as an array (a message's shape)."""
    return frame(msgspec.msgpack.encode(list(fields)))


BREACHES = [  # (what the child writes, what the host says it broke)
    (frame(b"\xc1"), "a message that is not MessagePack"),
    (frame(b"junk"), "a message that is not MessagePack"),
    (frame(b"\xa4e\xff\xfe\x00"), "a message that is not MessagePack"),  # not UTF-8
    (struct.pack(">I", 10) + b"junk", "a message that is not MessagePack"),  # the child's
    # own next message completes it
    (b"junk", "a message longer than"),  # read as a length
    (message(1, 2), "a message that is not one it may send"),
    (frame(msgspec.msgpack.encode("call")), "a message that is not one it may send"),
    (message(["call"], 1), "a message that is not one it may send"),
    (message("result", 1, True), "a message that is not one it may send"),
    (message("call", "7", "echo", [], {}), "a 'call' message whose 'id' is missing or wrong"),
    (message("cancel", True), "a 'cancel' message whose 'id' is missing or wrong"),
    (message("call", 9, "echo", {}, {}), "a 'call' message whose 'args' is missing or wrong"),
    (message("call", 9, "echo", []), "a 'call' message with missing or extra fields"),
    (
        message("done", 1, 5, None, []),
        "a 'done' message whose 'error' is missing or wrong",
    ),
    (
        message("done", 1, None, None, [1]),
        "a 'done' message whose 'forms' is missing or wrong",
    ),
    (
        message("ready", 1, {"helpers": [1]}),
        "a 'ready' message whose 'restore' is missing or wrong",
    ),
]


# Made by a real child (one child start each): a breach of the framing, of MessagePack, one
# the child's own next message completes, and a forged call; the text each other one gets is
# checked where the host reads the child's pipe (test_each_breach_is_told_what_it_broke).
IN_A_CHILD = [BREACHES[i] for i in (0, 3, 4, 9)]


def test_each_breach_is_told_what_it_broke() -> None:
    """What the host's reader of the child's pipe makes of each breach, followed by a message
    the child may send (which completes the frame of the one whose length is too long)."""
    for data, what in BREACHES:
        frames = FrameReader(MAX_MESSAGE_BYTES)
        frames.feed(data + framed(CancelCall(1)))
        with pytest.raises(ProtocolError, match=re.escape(what)):
            while (body := frames.next()) is not None:
                from_child(body)


async def test_a_child_that_breaks_the_protocol_is_stopped_and_replaced(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    """Each breach in turn: the child that breaks the protocol is stopped, and the next block
    runs in a new child (where the next breach is made: one child start a breach)."""
    for served, (data, what) in enumerate(IN_A_CHILD, 1):
        broken = await asyncio.wait_for(sandbox.run(WRITE.format(data=data)), 30)
        assert broken.error is not None, what
        assert f"was stopped because it broke the protocol ({what}" in broken.error, what
        after = await asyncio.wait_for(sandbox.run("print(await echo('alive'))"), 30)
        assert after.error is None, (what, after.error)
        assert after.stdout == "{'args': ('alive',), 'kwargs': {}}\n"
        assert host_tools.calls == [("echo", ("alive",), {})] * served  # nothing forged served


async def test_a_message_over_the_limit_stops_the_child(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(message_limit=1 << 20)
    code = WRITE.replace(
        "os.write(child.fd_out, {data!r})",
        "os.write(child.fd_out, (4 << 20).to_bytes(4, 'big') + b'[' * (4 << 20))",
    )
    broken = await asyncio.wait_for(sandbox.run(code), 30)
    assert broken.error is not None
    assert "broke the protocol (a message longer than 1,048,576 bytes)" in broken.error
    after = await asyncio.wait_for(sandbox.run("print('alive')"), 30)
    assert after.stdout == "alive\n"


def test_the_message_limit_holds_a_full_snapshot_and_no_more_is_buffered() -> None:
    assert inspect.signature(Sandbox).parameters["message_limit"].default == MAX_MESSAGE_BYTES
    assert MAX_SNAPSHOT_BYTES * 4 // 3 < MAX_MESSAGE_BYTES < 128 << 20  # base64, plus a margin
    frames = FrameReader(100)
    frames.feed(struct.pack(">I", 100) + b"a" * 60)
    assert frames.next() is None
    frames.feed(b"a" * 40)
    assert frames.next() == b"a" * 100  # a message at the limit, in two pieces
    frames.feed(struct.pack(">I", 101))
    with pytest.raises(ProtocolError, match="longer than 100 bytes"):
        frames.next()  # refused from its length, before any of it is kept
    assert not frames.partial


async def test_more_calls_in_flight_than_the_bound_stops_the_child(
    make_sandbox: MakeSandbox,
) -> None:
    box = make_sandbox(max_calls=8)
    calls = b"".join(message("call", i, "hang", [i], {}) for i in range(1001, 1010))
    broken = await asyncio.wait_for(box.run(WRITE.format(data=calls)), 30)
    assert broken.error is not None
    assert "broke the protocol (more than 8 tool calls in flight)" in broken.error
    after = await asyncio.wait_for(box.run("print(await echo('alive'))"), 30)
    assert after.error is None, after.error
    assert after.stdout == "{'args': ('alive',), 'kwargs': {}}\n"
