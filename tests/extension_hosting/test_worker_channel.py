"""The frame channel between the host and an extension worker, over real pipes: objects lent
to the other side are held while it has proxies of them and let go when it drops them."""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from vis_core.extension_host import worker_channel
from vis_core.extension_host.worker_channel import Channel
from vis_core.extension_host.worker_frames import Call, TargetKind
from vis_core.extension_host.worker_values import RemoteObject, run_method


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
        if call.name == "wait":  # blocks its thread until ``open`` (or the test) opens it
            return self.opened.wait(5)
        if call.name == "open":
            self.opened.set()
            return True
        if call.name == "ask_back":  # a call back to the calling side, from inside this one
            return self.channel.call(TargetKind.SDK, "identity", (args[0] * 2,))
        raise LookupError(call.name)

    def cancel(self, call_id: int) -> None:
        pass


@pytest.fixture
def pair() -> Iterator[tuple[Channel, Channel, Lender]]:
    """Two channels wired back to back: ``near`` calls ``far``, which lends objects."""
    near_in, far_out = os.pipe()
    far_in, near_out = os.pipe()
    lender = Lender()
    far = Channel(far_in, far_out, lender, name="far")
    lender.channel = far
    near_lender = Lender()
    near = Channel(near_in, near_out, near_lender, name="near")
    near_lender.channel = near
    far.start()
    near.start()
    yield near, far, lender
    os.close(near_out)  # each reader sees the end of its pipe and stops
    os.close(far_out)
    near.close(wait=5)
    far.close(wait=5)
    os.close(near_in)  # only now: a reused fd number must not feed a reader still running
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


def test_a_call_on_a_proxy_dropped_right_after_it_still_runs(pair) -> None:
    near, _, lender = pair
    for _ in range(200):  # the release of each proxy follows a call made on it
        assert near.call(TargetKind.SDK, "make").bump() == 1
    assert near.call(TargetKind.SDK, "same").bump() == 1
    assert lender.kept.count == 1


def test_a_call_served_while_another_one_blocks(pair) -> None:
    near, _, _ = pair
    _, waiting = near.request(TargetKind.SDK, "wait")
    # the thread serving ``wait`` handed the reading on: ``open`` is read and served
    assert near.call(TargetKind.SDK, "open") is True
    assert waiting.result(5) is True


def test_a_call_back_from_inside_a_call_is_answered(pair) -> None:
    near, _, _ = pair
    assert [near.call(TargetKind.SDK, "ask_back", (n,)) for n in range(20)] == [
        n * 2 for n in range(20)
    ]


def test_calls_beyond_the_thread_limit_wait_for_a_free_thread(pair, monkeypatch) -> None:
    near, _, lender = pair
    monkeypatch.setattr(worker_channel, "MAX_THREADS", 2)
    _, first = near.request(TargetKind.SDK, "wait")
    _, second = near.request(TargetKind.SDK, "wait")  # read by the second thread, kept
    _, third = near.request(TargetKind.SDK, "make")
    assert not second.done() and not third.done()
    lender.opened.set()  # the first ends: its thread serves what waited, in order
    assert first.result(5) is True
    assert second.result(5) is True
    assert third.result(5).bump() == 1
