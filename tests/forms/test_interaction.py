"""The core channel: vis.ask/vis.live from a worker thread through a real Host and its store."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    FormAnswered,
    FormRequested,
    LiveClosed,
    LiveOpened,
    LiveUpdated,
    TurnEnded,
)
from vis_core.extension import forms as F
from vis_core.extension import live_nodes as N
from vis_core.extension.context import CallContext, calling
from vis_core.extension.forms import AnswerReason
from vis_core.extension.live import LiveEvent, LiveEventKind, live
from vis_core.host import Host, HostOptions
from vis_core.interaction import FormRequest
from vis_core.model.activity import ActivityRecord, ActivityState, SymbolTag
from vis_core.model.turn import TurnStatus

from . import served


@pytest.fixture
async def host(workspace: Path) -> AsyncIterator[Host]:
    opened = await Host.open(HostOptions(workspace=workspace))
    yield opened
    await opened.close()


async def in_worker(host: Host, session_id: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` as an extension call of ``demo`` does: in its worker, bound to a call the
    host serves on its loop."""
    context = CallContext(
        session_id, host.space.root, host.space.project_root, owner="demo", runtime=host.runtime
    )
    return await served.in_worker(context, fn)


class Filler:
    """A front end that answers each form with fixed values after a moment."""

    def __init__(self, values: dict[str, Any] | None) -> None:
        self.values = values
        self.requests: list[FormRequest] = []

    async def present(self, request: FormRequest) -> dict[str, Any] | None:
        self.requests.append(request)
        await asyncio.sleep(0.01)
        return self.values


class Never:
    def __init__(self) -> None:
        self.showing = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def present(self, request: FormRequest) -> None:
        self.showing.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.cancelled.set()


def stored(host: Host, session_id: str, kind: type) -> list[Any]:
    return [s.event for s in host.store.events(session_id) if isinstance(s.event, kind)]


async def test_a_submitted_form_returns_values_and_is_stored_masked(host: Host) -> None:
    session = await host.new_session()
    filler = Filler({"user": "ann", "token": "s3cret"})
    host.interaction.add_presenter(filler)
    answer = await in_worker(
        host,
        session.id,
        lambda: F.ask(
            "Sign in", [F.plaintext("user"), F.password("token")], description="For deploys"
        ),
    )
    assert answer and answer["user"] == "ann" and answer.reveal("token") == "s3cret"
    assert filler.requests[0].owner == "demo" and filler.requests[0].form.description
    (requested,) = stored(host, session.id, FormRequested)
    (answered,) = stored(host, session.id, FormAnswered)
    assert requested.title == "Sign in" and requested.owner == "demo"
    assert [n["name"] for n in requested.form["nodes"]] == ["user", "token"]
    assert answered.request_id == requested.request_id and answered.reason == "submitted"
    assert answered.values == {"user": "ann", "token": "••••••"}


async def test_cancel_timeout_and_no_front_end(host: Host) -> None:
    session = await host.new_session()
    answer = await in_worker(host, session.id, lambda: F.ask("Q", [F.plaintext("a")]))
    assert answer.reason is AnswerReason.UNDELIVERABLE
    assert stored(host, session.id, FormAnswered)[-1].reason == "undeliverable"

    host.interaction.add_presenter(Filler(None))
    answer = await in_worker(host, session.id, lambda: F.ask("Q", [F.plaintext("a")]))
    assert answer.reason is AnswerReason.CANCELLED and not answer

    never = Never()
    host.interaction.add_presenter(never)
    answer = await in_worker(
        host, session.id, lambda: F.ask("Q", [F.plaintext("a")], timeout_ms=50)
    )
    assert answer.reason is AnswerReason.TIMEOUT
    # a form that was shown is taken down (under load it may time out before it is shown)
    assert never.cancelled.is_set() == never.showing.is_set()
    assert stored(host, session.id, FormAnswered)[-1].reason == "timeout"


async def test_a_cancelled_turn_cancels_its_open_form(host: Host) -> None:
    session = await host.new_session()
    never = Never()
    host.interaction.add_presenter(never)
    asking = asyncio.ensure_future(
        in_worker(host, session.id, lambda: F.ask("Q", [F.plaintext("a")], timeout_ms=0))
    )
    await never.showing.wait()  # the form is up, not only requested
    await session.emit(TurnEnded(session.id, turn_id="t", status=TurnStatus.CANCELLED))
    answer = await asking
    assert answer.reason is AnswerReason.CANCELLED and never.cancelled.is_set()


async def test_a_form_whose_asker_is_cancelled_is_stored_as_cancelled(host: Host) -> None:
    """The tool that asked was cancelled while the form was up: the form is taken down and
    the store says how it ended, as for every other end (no request left unanswered)."""
    session = await host.new_session()
    never = Never()
    host.interaction.add_presenter(never)
    form = F.Form("Q", [F.plaintext("a")], timeout_ms=0)
    asking = asyncio.ensure_future(host.interaction.ask_async(form, session.id, "demo"))
    await never.showing.wait()
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert never.cancelled.is_set()
    (requested,) = stored(host, session.id, FormRequested)
    (answered,) = stored(host, session.id, FormAnswered)
    assert (answered.request_id, answered.reason) == (requested.request_id, "cancelled")


async def test_ask_in_the_host_itself_is_refused(host: Host) -> None:
    """The synchronous vis.ask exists in a worker only: the host awaits the person on its loop."""
    session = await host.new_session()
    host.interaction.add_presenter(Filler({}))
    context = CallContext(
        session.id, host.space.root, host.space.project_root, owner="demo", runtime=host.runtime
    )
    with (
        calling(context),
        pytest.raises(RuntimeError, match="serves it to extension code in its worker"),
    ):
        F.ask("Q", [F.plaintext("a")])


async def test_live_updates_are_batched_events_anchored_to_the_activity(host: Host) -> None:
    session = await host.new_session()
    record = ActivityRecord(
        id="act1",
        session_id=session.id,
        turn_id="turn1",
        iteration_id="i",
        tool="demo.build",
        tag=SymbolTag.MUTATION,
        state=ActivityState.RUNNING,
        presentation=None,
        owner="demo",
    )
    await session.emit(ActivityStarted(session.id, activity=record))

    def work() -> str:
        view = live("Build", [N.status("s", "start"), N.output("log")], flush_ms=60)
        for i in range(5):
            view["log"].write(f"line {i}")
        view["s"].set("done", tone="ok")
        view.close("done", "5 lines")
        return view.id

    view_id = await in_worker(host, session.id, work)
    (opened,) = stored(host, session.id, LiveOpened)
    assert (opened.view_id, opened.placement, opened.owner) == (view_id, "inline", "demo")
    assert (opened.activity_id, opened.turn_id) == ("act1", "turn1")
    assert [n["id"] for n in opened.nodes] == ["s", "log"]
    updates = stored(host, session.id, LiveUpdated)
    assert len(updates) < 6  # batched
    flat = [u for batch in updates for u in batch.updates]
    assert [u["op"] for u in flat] == ["write"] * 5 + ["set"]
    (closed,) = stored(host, session.id, LiveClosed)
    assert (closed.reason, closed.summary) == ("done", "5 lines")


async def test_panel_keys_replace_and_person_events_reach_callbacks(host: Host) -> None:
    session = await host.new_session()
    seen: list[tuple[str, str | None]] = []
    got = threading.Event()

    def on_event(event: LiveEvent) -> None:
        from vis_core.extension.context import current_call

        call = current_call()
        seen.append((event.kind.value, call.owner if call else None))
        got.set()

    first = await in_worker(
        host, session.id, lambda: live("Queue", [N.status("s")], placement="panel", key="queue")
    )
    second = await in_worker(
        host,
        session.id,
        lambda: live(
            "Queue", [N.button("retry", "Retry")], placement="panel", key="queue", on_event=on_event
        ),
    )
    assert first.is_closed and first.close_reason == "replaced" and first.is_interrupted
    host.interaction.live_event(second.id, LiveEvent(LiveEventKind.BUTTON, second.id, "retry"))
    assert await asyncio.to_thread(got.wait, 5)
    assert seen == [("button", "demo")]
    events = await asyncio.to_thread(lambda: list(second.events(timeout=0.05)))
    assert [e.node_id for e in events] == ["retry"]
    host.interaction.live_event(second.id, LiveEvent(LiveEventKind.STOP, second.id))
    assert second.is_interrupted
    kinds = [
        type(s.event).__name__
        for s in host.store.events(session.id)
        if type(s.event).__name__.startswith("Live")
    ]
    assert kinds == ["LiveOpened", "LiveClosed", "LiveOpened"]


async def test_inline_views_close_when_the_turn_ends(host: Host) -> None:
    session = await host.new_session()
    view = await in_worker(host, session.id, lambda: live("Run", [N.spinner("s")]))
    await session.emit(TurnEnded(session.id, turn_id="t", status=TurnStatus.CANCELLED))
    assert view.is_interrupted and view.is_closed and view.close_reason == "cancelled"
    async with asyncio.timeout(30):
        while not stored(host, session.id, LiveClosed):  # stored after the view closed
            await asyncio.sleep(0.01)
    assert stored(host, session.id, LiveClosed)[-1].reason == "cancelled"


async def test_a_panel_view_of_a_cancelled_call_is_interrupted_and_closed(host: Host) -> None:
    """A panel outlives its turn, but not a cancel of the call that opened it: it kept saying
    what the stopped tool last set ("● waiting"), and a thread waiting on its events waited on."""
    session = await host.new_session()

    async def call(turn_id: str, key: str) -> Any:
        record = ActivityRecord(
            id=f"act-{turn_id}",
            session_id=session.id,
            turn_id=turn_id,
            iteration_id="i",
            tool="demo.job",
            tag=SymbolTag.MUTATION,
            state=ActivityState.RUNNING,
            presentation=None,
            owner="demo",
        )
        await session.emit(ActivityStarted(session.id, activity=record))
        view = await in_worker(
            host, session.id, lambda: live(key, [N.status("s")], placement="panel", key=key)
        )
        return view, record

    done, record = await call("turn1", "done")
    await session.emit(
        ActivityEnded(session.id, activity=replace(record, state=ActivityState.SUCCEEDED))
    )
    await session.emit(TurnEnded(session.id, turn_id="turn1", status=TurnStatus.COMPLETED))
    stopped, _ = await call("turn2", "stopped")
    waiting = asyncio.ensure_future(asyncio.to_thread(lambda: list(stopped.events())))
    await session.emit(TurnEnded(session.id, turn_id="turn2", status=TurnStatus.CANCELLED))
    if not stopped.is_closed:
        stopped.close("the test ended")  # the waiting thread ends in any case
    assert stopped.is_interrupted and stopped.close_reason == "cancelled"
    await waiting  # the thread waiting on its events is free
    assert not done.is_closed and not done.is_interrupted  # its call ended before
    alone, record = await call("turn3", "alone")  # a call cancelled on its own
    await session.emit(
        ActivityEnded(session.id, activity=replace(record, state=ActivityState.CANCELLED))
    )
    assert alone.is_interrupted and alone.close_reason == "cancelled"
    async with asyncio.timeout(30):
        while len(stored(host, session.id, LiveClosed)) < 2:  # stored after the views closed
            await asyncio.sleep(0.01)
    assert [(c.view_id, c.reason) for c in stored(host, session.id, LiveClosed)] == [
        (stopped.id, "cancelled"),
        (alone.id, "cancelled"),
    ]
