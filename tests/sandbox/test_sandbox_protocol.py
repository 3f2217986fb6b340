"""A child that breaks the protocol (its code is untrusted): the host stops it and says so,
never crashes or hangs, and the next block runs in a new child."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from vis_core.sandbox import Sandbox
from vis_core.sandbox.protocol import MAX_MESSAGE_BYTES, Lines, ProtocolError
from vis_core.sandbox.state import MAX_SNAPSHOT_BYTES

from .conftest import HostTools, MakeSandbox

# Block code that writes ``data`` on the child's own protocol pipe, as hostile code can.
WRITE = (
    "import gc, os\n"
    "child = next(o for o in gc.get_objects() if type(o).__name__ == 'Child')\n"
    "os.write(child.fd_out, {data!r})\n"
)


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"junk\n", "a line that is not JSON"),
        (b"junk", "a line that is not JSON"),  # the child's own next message completes it
        (b"[1, 2]\n", "a line that is not a message it may send"),
        (b'"call"\n', "a line that is not a message it may send"),
        (b'{"t": ["call"], "id": 1}\n', "a line that is not a message it may send"),
        (b'{"t": "result", "id": 1, "ok": true}\n', "a line that is not a message it may send"),
        (
            b'{"t": "call", "id": "7", "name": "echo", "args": [], "kwargs": {}}\n',
            "a 'call' message whose 'id' is missing or wrong",
        ),
        (b'{"t": "cancel", "id": true}\n', "a 'cancel' message whose 'id' is missing or wrong"),
        (
            b'{"t": "call", "id": 9, "name": "echo", "args": {}, "kwargs": {}}\n',
            "a 'call' message whose 'args' is missing or wrong",
        ),
        (
            b'{"t": "call", "id": 9, "name": "e\x1b[2J\x00", "args": [], "kwargs": {}}\n',
            "a line that is not JSON",  # raw control characters inside a JSON string
        ),
        (
            b'{"t": "done", "id": 1, "error": 5, "snapshot": null, "forms": []}\n',
            "a 'done' message whose 'error' is missing or wrong",
        ),
        (
            b'{"t": "done", "id": 1, "error": null, "snapshot": null, "forms": [1]}\n',
            "a 'done' message whose 'forms' are not objects",
        ),
        (
            b'{"t": "ready", "pid": 1, "restore": {"helpers": [1]}}\n',
            "a 'ready' message whose 'restore' report is wrong",
        ),
    ],
)
async def test_a_child_that_breaks_the_protocol_is_stopped_and_replaced(
    sandbox: Sandbox, host_tools: HostTools, data: bytes, what: str
) -> None:
    broken = await asyncio.wait_for(sandbox.run(WRITE.format(data=data)), 30)
    assert broken.error is not None
    assert f"was stopped because it broke the protocol ({what})" in broken.error
    after = await asyncio.wait_for(sandbox.run("print(await echo('alive'))"), 30)
    assert after.error is None, after.error
    assert after.stdout == "{'args': ('alive',), 'kwargs': {}}\n"
    assert host_tools.calls == [("echo", ("alive",), {})]  # nothing forged was served


async def test_a_message_over_the_limit_stops_the_child(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(message_limit=1 << 20)
    code = WRITE.replace(
        "os.write(child.fd_out, {data!r})", "os.write(child.fd_out, b'[' * {data})"
    )
    broken = await asyncio.wait_for(sandbox.run(code.format(data=4 << 20)), 30)
    assert broken.error is not None
    assert "broke the protocol (a message longer than 1,048,576 bytes)" in broken.error
    after = await asyncio.wait_for(sandbox.run("print('alive')"), 30)
    assert after.stdout == "alive\n"


def test_the_message_limit_holds_a_full_snapshot_and_no_more_is_buffered() -> None:
    assert inspect.signature(Sandbox).parameters["message_limit"].default == MAX_MESSAGE_BYTES
    assert MAX_SNAPSHOT_BYTES * 4 // 3 < MAX_MESSAGE_BYTES < 128 << 20  # base64, plus a margin
    lines = Lines(100)
    assert lines.feed(b"a" * 60) == []
    with pytest.raises(ProtocolError, match="longer than 100 bytes"):
        lines.feed(b"b" * 50 + b"\n")  # the line ends in this chunk: still too long
    lines = Lines(100)
    assert lines.feed(b"a" * 100) == []
    with pytest.raises(ProtocolError):
        lines.feed(b"b")
    assert lines._size == 100  # what was refused is not kept


async def test_more_calls_in_flight_than_the_bound_stops_the_child(
    make_sandbox: MakeSandbox,
) -> None:
    box = make_sandbox(max_calls=8)
    calls = b"".join(
        b'{"t": "call", "id": %d, "name": "hang", "args": [%d], "kwargs": {}}\n' % (i, i)
        for i in range(1001, 1010)
    )
    broken = await asyncio.wait_for(box.run(WRITE.format(data=calls)), 30)
    assert broken.error is not None
    assert "broke the protocol (more than 8 tool calls in flight)" in broken.error
    after = await asyncio.wait_for(box.run("print(await echo('alive'))"), 30)
    assert after.error is None, after.error
    assert after.stdout == "{'args': ('alive',), 'kwargs': {}}\n"
