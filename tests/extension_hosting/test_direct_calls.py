"""The sandbox child calls most extension tools on a channel of its own to their worker, which
answers it directly and tells the host first: each call is still one Activity, stored in the
order the calls ended, shown running while it runs, cancelled with its block, failed with
today's words when its worker dies. The child runs the model's code, so the worker reads that
channel as the host reads the child: a hostile block that writes to it by fd number gets its
call refused or the channel closed, and the worker and the session go on."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from vis_core.events import ActivityEnded, ActivityStarted, ActivityUpdated, Event
from vis_core.ipc.framing import FrameReader
from vis_core.ipc.kinds import TargetKind
from vis_core.ipc.messages import (
    Call,
    CancelCall,
    Ready,
    Refused,
    Restore,
    ToolCall,
    direct_to_child,
    framed,
)
from vis_core.model.activity import ActivityState

from .harness import code_turn, install_extension, open_host, run_blocks, write_script

SECRET = "direct-test-secret-4711"

EXTENSION = '''
import asyncio
import os
import time

import vis_core.extension as vis


def route() -> bool:
    """Whether this call came on the direct channel (the worker numbers those below 0)."""
    from vis_core.extension_host.worker_channel import serving

    return (serving.get() or 0) < 0


def echo(value: int) -> int:
    """Gives its argument back."""
    return value


def pid() -> int:
    """The worker's process id."""
    return os.getpid()


def slow() -> str:
    """Says it is halfway, then waits for the file gate."""
    vis.publish_activity(vis.ActivityPresentation("Slow", "halfway"))
    gate = vis.workspace_root() / "gate"
    deadline = time.monotonic() + 60
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return "done"


async def publishes(value: int) -> int:
    """Says it got ``value``, then gives it back."""
    vis.publish_activity(vis.ActivityPresentation("Publishes", f"got {value}"))
    return value


async def waits() -> str:
    """Waits a minute."""
    await asyncio.sleep(60)
    return "woke"


def nap() -> bool:
    """Sleeps a moment."""
    time.sleep(0.3)
    return True


def die() -> int:
    """Ends its worker."""
    os._exit(3)


def _render(*, phase, args, kwargs, result, error):
    return vis.ActivityPresentation("Started", str(phase))


def started(value: int) -> int:
    """Gives its argument back; its start is drawn, so it goes through the host."""
    return value


vis.register_extension(vis.Extension(
    name="direct", alias="direct", description="Direct calls.", env=("DIRECT_TEST_SECRET",),
    symbols=[
        vis.Symbol(route), vis.Symbol(echo), vis.Symbol(pid), vis.Symbol(slow),
        vis.Symbol(waits), vis.Symbol(die), vis.Symbol(nap), vis.Symbol(publishes),
        vis.Symbol(started, activity=vis.Activity("Started", render=_render)),
    ],
))
'''

# waits until the host paired this child with the extension's worker: its direct channel
PAIRED = """
import asyncio, gc, json, os
await direct.pid()  # the worker runs (a first call starts it)
gc.unfreeze()  # what the child froze at its start is all there is to see again
child, = [o for o in gc.get_objects() if type(o).__name__ == "Child"]
for _ in range(3000):
    route = child.direct.get("direct.pid")
    if route is not None and route.open:
        break
    await asyncio.sleep(0.01)
fd = route.socket.fileno()
"""


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIRECT_TEST_SECRET", SECRET)


def _of(
    events: list[Event], *tools: str
) -> list[ActivityStarted | ActivityUpdated | ActivityEnded]:
    """The Activity events of the calls of ``tools``, in their order."""
    kinds = ActivityStarted | ActivityUpdated | ActivityEnded
    return [e for e in events if isinstance(e, kinds) and e.activity and e.activity.tool in tools]


async def _each_then_started(
    workspace: Path, script_path: Path, tool: str
) -> tuple[list[tuple[str, str]], list[Event]]:
    """Sixty rounds of a direct call of ``tool``, then one of ``started`` (through the host),
    in one block: the kinds and tools of their Activity events in the order stored, and every
    stored event."""
    block = f"""
    import json
    routes = [await direct.route() for _ in range(3)]
    for i in range(60):
        await direct.{tool}(i)
        await direct.started(i)
    print(json.dumps(routes))
    """
    outcome, stored = await run_blocks(workspace, script_path, block)
    assert outcome.printed()[1:] == [True, True]  # (the first may start the worker)
    order = [
        (type(e).__name__, e.activity.tool)
        for e in _of(stored, tool, "started")  # (only ``publish`` updates an Activity)
    ]
    return order, stored


async def test_direct_calls_are_stored_in_the_order_they_ended(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    """Each echo ends before the next call through the host starts, in the store as in the
    block: the host reads what the worker wrote before it handles the child's next frame."""
    install_extension(vis_home, "direct", EXTENSION)
    order, stored = await _each_then_started(workspace, script_path, "echo")
    expected = [
        ("ActivityStarted", "echo"),
        ("ActivityEnded", "echo"),
        ("ActivityStarted", "started"),
        ("ActivityEnded", "started"),
    ] * 60
    assert order == expected
    ends = [e for e in stored if isinstance(e, ActivityEnded) and e.activity is not None]
    assert all(e.activity.state is ActivityState.SUCCEEDED for e in ends if e.activity)


async def test_a_direct_call_that_published_ends_before_the_next_call_starts(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    """A direct call whose tool published an update ends in the store before the child's
    next call (through the host) starts; its end waited for the update's task before, so the
    next call's start could be stored first."""
    install_extension(vis_home, "direct", EXTENSION)
    order, _ = await _each_then_started(workspace, script_path, "publishes")
    expected = [
        ("ActivityStarted", "publishes"),
        ("ActivityUpdated", "publishes"),
        ("ActivityEnded", "publishes"),
        ("ActivityStarted", "started"),
        ("ActivityEnded", "started"),
    ] * 60
    assert order == expected


async def test_a_long_direct_call_shows_running_and_publishes(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "direct", EXTENSION)
    write_script(script_path, code_turn("await direct.route()\nprint(await direct.slow())"))
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        turn = asyncio.ensure_future(session.submit("go"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            isinstance(e, ActivityUpdated)
            and e.activity is not None
            and e.activity.presentation is not None
            and e.activity.presentation.summary == "halfway"
            for e in events
        ):
            await asyncio.sleep(0.02)
        assert [type(e) for e in _of(events, "slow")] == [ActivityStarted, ActivityUpdated]
        (workspace / "gate").write_text("open")
        await asyncio.wait_for(turn, 60)
    finally:
        await host.close()
    record = _of(events, "slow")[-1].activity
    assert record is not None and record.state is ActivityState.SUCCEEDED
    assert record.presentation is not None and record.presentation.summary == "halfway"


async def test_a_cancelled_direct_call_ends_cancelled(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "direct", EXTENSION)
    block = """
    import asyncio, json
    routed = await direct.route() or await direct.route()
    try:
        await asyncio.wait_for(direct.waits(), 0.5)
    except TimeoutError:
        timed_out = True
    print(json.dumps([routed, timed_out, await direct.echo(7)]))
    """
    outcome, stored = await run_blocks(workspace, script_path, block)
    assert outcome.printed() == [True, True, 7]
    waits = [e.activity.state for e in _of(stored, "waits") if e.activity]
    assert waits == [ActivityState.RUNNING, ActivityState.CANCELLED]


async def test_a_worker_that_dies_fails_its_direct_call_and_the_next_starts_one(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "direct", EXTENSION)
    block = """
    import asyncio, json
    routed = await direct.route() or await direct.route()
    try:
        await direct.die()
    except Exception as exc:
        died = str(exc)
    again = [await direct.route() for _ in range(50)]  # a new worker, paired again
    print(json.dumps([routed, died, again[0], any(again)]))
    """
    outcome, stored = await run_blocks(workspace, script_path, block)
    routed, died, first, any_direct = outcome.printed()
    assert routed is True
    assert died == (  # as through the host
        "ChildGone: the extension worker ended while die ran: it exited with code 3 (an extension "
        "called os._exit or crashed it); the next call starts a new one"
    )
    assert first is False  # through the host: it starts the new worker
    assert any_direct is True
    record = _of(stored, "die")[-1].activity
    assert record is not None and record.state is ActivityState.FAILED


# -- a hostile block ----------------------------------------------------------------------

# each writes to the direct channel by its fd (what a block cannot import of Vis under the jail
# is written here), then shows the worker and the session go on, and ends its sandbox child
# (the next block's child is paired anew)
CLOSING = {
    "junk": b"\x00\x00\x00\x05hello",
    "oversize": (2**31).to_bytes(4, "big") + b"x" * 100,
    "ready": framed(Ready(1, Restore())),
    "sdk call": framed(Call(1, TargetKind.SDK, "notify", b"")),
    "reused id": framed(ToolCall(10**9, "direct.nap", [], {})) * 2,
}

AFTER = """
for _ in range(3000):  # until the worker closed it and the child saw
    if not route.open:
        break
    await asyncio.sleep(0.01)
print(json.dumps({
    "open": route.open, "pid": await direct.pid(), "routed": await direct.route(),
    "echo": await direct.echo(5),
}))
os._exit(0)
"""


async def test_a_hostile_block_gets_the_direct_channel_closed_and_goes_on(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "direct", EXTENSION)
    first = PAIRED + "print(json.dumps({'pid': await direct.pid()}))"
    blocks = [first] + [f"{PAIRED}os.write(fd, {attack!r})\n{AFTER}" for attack in CLOSING.values()]
    outcome, _ = await run_blocks(workspace, script_path, *blocks)
    worker = json.loads(outcome.blocks[0].stdout)["pid"]
    for name, block in zip(CLOSING, outcome.blocks[1:], strict=True):
        last = block.stdout.strip().splitlines()[-1]
        assert json.loads(last) == {
            "open": False,  # closed by the worker
            "pid": worker,  # which went on
            "routed": False,  # calls go through the host now
            "echo": 5,
        }, name


REFUSED_CALLS = b"".join(
    framed(call)
    for call in (
        ToolCall(10**9, "os.environ", [], {}),  # no such tool
        ToolCall(10**9 + 1, "apropos", ["x"], {}),  # Vis's own: the host runs it
        ToolCall(10**9 + 2, "direct.started", [1], {}),  # its start is drawn: not granted
        ToolCall(10**9 + 3, "direct.echo", [{"$": "handle", "v": {"id": "h1"}}], {}),  # a handle
        CancelCall(5),  # nothing to cancel
    )
)
FLOOD = framed(ToolCall(10**9 + 4, "nothing", [], {})) * 3000

REFUSED = f"""{PAIRED}
import select, socket
asyncio.get_running_loop().remove_reader(fd)  # read what the worker answers here
socket.send_fds(route.socket, [{REFUSED_CALLS!r}], [0])  # an fd along: dropped, not a channel
os.write(fd, {FLOOD!r})
got = b""
deadline = asyncio.get_running_loop().time() + 30
while got.count(b"refused") < 3004 and asyncio.get_running_loop().time() < deadline:
    if select.select([fd], [], [], 0.05)[0]:
        got += os.read(fd, 1 << 16)
asyncio.get_running_loop().add_reader(fd, route.on_readable)  # the child's again
with open("answers.bin", "wb") as answers:
    answers.write(got)
print(json.dumps({{"pid": await direct.pid(), "echo": await direct.echo(3)}}))
"""


async def test_calls_not_granted_are_refused_and_nothing_of_the_worker_reaches_the_child(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "direct", EXTENSION)
    outcome, _ = await run_blocks(workspace, script_path, REFUSED)
    printed = outcome.printed()
    got = (workspace / "answers.bin").read_bytes()
    frames = FrameReader(1 << 20)
    frames.feed(got)
    answers = [direct_to_child(body) for body in frames.frames()]
    assert {type(a) for a in answers} == {Refused}  # each call refused, nothing else said
    assert [a.id for a in answers] == [10**9 + n for n in range(4)] + [10**9 + 4] * 3000
    assert SECRET.encode() not in got
    assert printed["echo"] == 3
