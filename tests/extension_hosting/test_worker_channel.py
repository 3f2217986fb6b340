"""The frame channel between the host and an extension worker, over real pipes: objects lent
to the other side are held while it has proxies of them and let go when it drops them."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import fcntl
import gc
import os
import struct
import termios
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import PurePosixPath
from typing import Any

import pytest

from vis_core.extension_host.worker_channel import Channel, ChannelClosed
from vis_core.ipc.kinds import TargetKind
from vis_core.ipc.messages import Call, Reply, framed
from vis_core.ipc.trusted import RemoteObject, dumps, run_method


class Color(enum.Enum):
    RED = "red"


class Unloadable(Exception):
    """An exception that pickles but does not load by its own reduce (its __init__ refuses)."""

    def __init__(self, text: str, code: int = 0, *, _check: bool = True) -> None:
        super().__init__(text)
        if _check and not isinstance(code, int):
            raise TypeError("code")
        self.code = code

    def __reduce__(self) -> Any:
        return (Unloadable, (str(self), "not an int"))


class Counter:
    """A live object: it crosses by reference, never by value."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def bump(self) -> int:
        with self.lock:
            self.count += 1
            return self.count


class Lender:
    """Serves ``make`` (a new live object each time), ``same`` (one kept object) and methods."""

    def __init__(self) -> None:
        self.channel: Channel | None = None
        self.kept = Counter()
        self.opened = threading.Event()  # what ``wait`` waits for

    def serve(self, call: Call, args: tuple, kwargs: dict) -> Any:
        assert self.channel is not None
        if call.target is TargetKind.OBJECT:
            assert call.ref is not None
            return run_method(self.channel.exports.get(call.ref), call.name, args, kwargs)
        if call.name == "make":
            return Counter()
        if call.name == "same":
            return self.kept
        if call.name == "identity":
            return args[0]
        if call.name == "keyword":
            return kwargs["value"]
        if call.name == "wait":  # blocks its thread until ``open`` (or the test) opens it
            return self.opened.wait(5)
        if call.name == "open":
            self.opened.set()
            return True
        if call.name == "raise":
            raise args[0]
        if call.name == "raise_unloadable":
            raise Unloadable("no")
        if call.name == "ask_back":  # a call back to the calling side, from inside this one
            return self.channel.call(TargetKind.SDK, "identity", (args[0] * 2,))
        raise LookupError(call.name)

    def cancel(self, call_id: int) -> None:
        pass


@pytest.fixture
def pair() -> Iterator[tuple[Channel, Channel, Lender]]:
    with channels() as made:
        yield made


class InlineLender(Lender):
    """A lender whose loop serves ``wait`` and ``identity`` itself (as a worker's loop serves
    an extension's plain ``def`` tool)."""

    def inline(self, call: Call) -> bool:
        return call.name in ("wait", "identity")


@contextlib.contextmanager
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own: the one loop of the other process."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-loop", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


@contextlib.contextmanager
def channels(
    lender: Lender | None = None, **limits: Any
) -> Iterator[tuple[Channel, Channel, Lender]]:
    """Two channels wired back to back, each read by its own loop: ``near`` calls ``far``,
    which lends objects (and serves them within ``limits``)."""
    near_in, far_out = os.pipe()
    far_in, near_out = os.pipe()
    lender = lender or Lender()
    with loop_thread() as far_loop, loop_thread() as near_loop:
        far = Channel(far_in, far_out, lender, name="far", loop=far_loop, **limits)
        lender.channel = far
        near_lender = Lender()
        near = Channel(near_in, near_out, near_lender, name="near", loop=near_loop)
        near_lender.channel = near
        far.start()
        near.start()
        try:
            yield near, far, lender
        finally:
            os.close(near_out)  # each loop sees the end of its pipe and stops reading
            os.close(far_out)
            near.close(wait=5)
            far.close(wait=5)
            os.close(near_in)
            os.close(far_in)


def _settles(predicate: Any) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_objects_are_let_go_when_the_other_side_drops_its_proxies(pair) -> None:
    near, far, _ = pair
    proxies = [near.call(TargetKind.SDK, "make") for _ in range(50)]
    assert all(type(p) is RemoteObject for p in proxies)
    assert proxies[0].bump() == 1
    assert len(far.exports) >= 50  # the counters, and the bound method just called
    del proxies
    gc.collect()
    near.call(TargetKind.SDK, "same")  # the next frame tells the other side
    assert _settles(lambda: len(far.exports) == 1)  # only the proxy just returned, held


def test_an_object_sent_twice_lives_until_both_proxies_are_dropped(pair) -> None:
    near, far, lender = pair
    first = near.call(TargetKind.SDK, "same")
    second = near.call(TargetKind.SDK, "same")
    assert first.bump() == 1
    del first
    gc.collect()
    assert second.bump() == 2  # still reachable: one proxy of it is left
    del second
    gc.collect()
    near.call(TargetKind.SDK, "make")
    assert _settles(lambda: lender.kept not in far.exports._objects.values())


def test_a_proxy_sent_back_home_is_the_object_itself(pair) -> None:
    near, _, lender = pair
    proxy = near.call(TargetKind.SDK, "same")
    back = near.call(TargetKind.SDK, "identity", (proxy,))
    # it arrived on the lending side as the kept object itself, which answered with it
    assert back.bump() == 1
    assert lender.kept.count == 1


def test_objects_deep_in_plain_data_still_cross_by_reference(pair) -> None:
    near, _, lender = pair
    proxy = near.call(TargetKind.SDK, "same")
    sent = {"deep": [1, ("two", [{"x": proxy}])], "made": near.call(TargetKind.SDK, "make")}
    back = near.call(TargetKind.SDK, "identity", (sent,))
    assert back["deep"][1][1][0]["x"].bump() == 1  # the kept object, there and back
    assert lender.kept.count == 1
    assert back["made"].bump() == 1
    # a keyword argument too: the kept object itself, not a copy, reaches the other side
    assert near.call(TargetKind.SDK, "keyword", kwargs={"value": proxy}).bump() == 2
    assert lender.kept.count == 2


def test_data_crosses_as_itself_however_it_nests(pair) -> None:
    near, _, _ = pair
    nested: Any = "bottom"
    for level in range(12):  # deeper than the look for plain data goes
        nested = [level, {"inner": (nested, None, 1.5, b"raw")}]
    for value in (nested, {1: "int key"}, [True, None, -3], PurePosixPath("/a/b"), {4, 5}):
        assert near.call(TargetKind.SDK, "identity", (value,)) == value
    assert type(near.call(TargetKind.SDK, "identity", (Color.RED,))) is Color


def test_a_call_on_a_proxy_dropped_right_after_it_still_runs(pair) -> None:
    near, _, lender = pair
    for _ in range(200):  # the release of each proxy follows a call made on it
        assert near.call(TargetKind.SDK, "make").bump() == 1
    assert near.call(TargetKind.SDK, "same").bump() == 1
    assert lender.kept.count == 1


def test_a_call_served_while_another_one_blocks(pair) -> None:
    near, _, _ = pair
    _, waiting = near.request(TargetKind.SDK, "wait")
    # the thread serving ``wait`` blocks; the loop reads ``open`` and another thread serves it
    assert near.call(TargetKind.SDK, "open") is True
    assert waiting.result(5) is True


def test_a_call_back_from_inside_a_call_is_answered(pair) -> None:
    near, _, _ = pair
    assert [near.call(TargetKind.SDK, "ask_back", (n,)) for n in range(20)] == [
        n * 2 for n in range(20)
    ]


def test_the_watchdog_rests_without_calls_and_looks_again_when_they_come() -> None:
    with channels(InlineLender(), watchdog_rest=0.05) as (near, far, _):
        assert near.call(TargetKind.SDK, "identity", (1,)) == 1  # served by the loop itself
        assert _settles(lambda: not far._watching.is_set())  # no call for a while: it rests
        _, waiting = near.request(TargetKind.SDK, "wait")  # blocks the loop that serves it
        # only the watchdog, awake again, reads ``open`` for the blocked loop
        assert near.call(TargetKind.SDK, "open") is True
        assert waiting.result(5) is True


def test_errors_cross_as_themselves_even_when_their_init_cannot_rebuild_them(pair) -> None:
    near, _, _ = pair
    with pytest.raises(KeyError, match="missing"):
        near.call(TargetKind.SDK, "raise", (KeyError("missing"),))
    with pytest.raises(Unloadable, match="no") as raised:  # its class, args and fields
        near.call(TargetKind.SDK, "raise_unloadable")
    assert raised.value.code == 0
    with pytest.raises(LookupError, match="unknown"):
        near.call(TargetKind.SDK, "unknown")


def test_calls_beyond_the_thread_limit_wait_for_a_free_thread() -> None:
    with channels(max_threads=2) as (near, _, lender):
        _, first = near.request(TargetKind.SDK, "wait")
        _, second = near.request(TargetKind.SDK, "wait")  # served by the second thread
        _, third = near.request(TargetKind.SDK, "make")
        assert not second.done() and not third.done()
        lender.opened.set()  # the first ends: its thread serves what waited, in order
        assert first.result(5) is True
        assert second.result(5) is True
        assert third.result(5).bump() == 1


# -- the host's side, read by its event loop -------------------------------------------------


class LoopEnd:
    """A channel read by the running loop, wired to raw pipes the test writes frames into."""

    def __init__(self) -> None:
        self.into, self.write_end = os.pipe()  # the test writes the other side's frames here
        self.read_end, self.out = os.pipe()  # the channel's calls land here, unread
        self.channel = Channel(
            self.into, self.out, Lender(), name="loop", loop=asyncio.get_running_loop()
        )
        self.channel.start()

    def answer(self, call_id: int, value: Any) -> bytes:
        payload = dumps(value, self.channel.exports, self.channel)
        return framed(Reply(call_id, True, payload))

    async def drained(self) -> None:
        """Until the loop has read everything written so far (FIONREAD of the pipe is 0)."""
        while struct.unpack("i", fcntl.ioctl(self.into, termios.FIONREAD, b"\0" * 4))[0]:
            await asyncio.sleep(0)

    def close(self) -> None:
        for fd in (self.write_end, self.read_end, self.into, self.out):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
async def loop_end() -> AsyncIterator[LoopEnd]:
    end = LoopEnd()
    yield end
    end.channel.close("the test ended")
    end.close()


@pytest.fixture
async def loop_pair() -> AsyncIterator[tuple[Channel, Lender]]:
    """``near`` read by the running loop, calling ``far`` (a worker: its own loop reads it)."""
    near_in, far_out = os.pipe()
    far_in, near_out = os.pipe()
    lender = Lender()
    with loop_thread() as far_loop:
        far = Channel(far_in, far_out, lender, name="far", loop=far_loop)
        lender.channel = far
        near = Channel(near_in, near_out, Lender(), name="near", loop=asyncio.get_running_loop())
        far.start()
        near.start()
        yield near, lender
        os.close(near_out)
        os.close(far_out)
        far.close(wait=5)
        await asyncio.to_thread(near.close, wait=5)  # the loop reads the end of its pipe
        os.close(near_in)
        os.close(far_in)


async def test_the_loop_answers_calls_awaited_on_it(loop_pair) -> None:
    near, _ = loop_pair
    for n in range(50):
        _, answer = near.request_async(TargetKind.SDK, "identity", (n,))
        assert await answer == n
    assert (await near.request_async(TargetKind.SDK, "make")[1]).bump() == 1


async def test_a_call_waited_on_from_the_loop_itself_reads_its_answer(loop_pair) -> None:
    near, _ = loop_pair
    assert near.call(TargetKind.SDK, "identity", (3,)) == 3  # blocks the loop: reads itself


async def test_a_thread_waiting_while_the_loop_is_held_up_reads_its_answer(loop_pair) -> None:
    near, _ = loop_pair
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(near.call(TargetKind.SDK, "same")))
    thread.start()
    thread.join(10)  # holds the loop up meanwhile: the thread reads its answer itself
    assert not thread.is_alive() and result[0].bump() == 1


async def test_an_answer_in_pieces_is_read_when_whole(loop_end: LoopEnd) -> None:
    call_id, answer = loop_end.channel.request_async(TargetKind.SDK, "identity", (1,))
    data = loop_end.answer(call_id, {"value": 41})
    for piece in (data[:3], data[3:9], data[9:-1]):
        os.write(loop_end.write_end, piece)
        await loop_end.drained()
        assert not answer.done()  # type: ignore[attr-defined]
    os.write(loop_end.write_end, data[-1:] + loop_end.answer(99, "not asked"))
    assert await answer == {"value": 41}


async def test_the_other_side_ending_in_the_middle_of_a_frame_fails_the_calls(
    loop_end: LoopEnd,
) -> None:
    _, answer = loop_end.channel.request_async(TargetKind.SDK, "identity", (1,))
    os.write(loop_end.write_end, loop_end.answer(1, "cut")[:-2])
    os.close(loop_end.write_end)
    with pytest.raises(ChannelClosed, match="middle of a frame"):
        await answer
    assert loop_end.channel.closed


async def test_an_answer_after_its_caller_gave_up_is_dropped(loop_end: LoopEnd) -> None:
    channel = loop_end.channel
    first, answer = channel.request_async(TargetKind.SDK, "identity", (1,))
    waiting = asyncio.ensure_future(answer)
    await asyncio.sleep(0)
    waiting.cancel()  # Esc: the caller stops waiting; the answer still comes
    with pytest.raises(asyncio.CancelledError):
        await waiting
    second, again = channel.request_async(TargetKind.SDK, "identity", (2,))
    os.write(loop_end.write_end, loop_end.answer(first, "late") + loop_end.answer(second, 2))
    assert await again == 2
    assert not channel.closed and channel.answered(first)
