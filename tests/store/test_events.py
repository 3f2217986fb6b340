"""The event log and its projections: turns, replies, iterations, blocks, activities, usage."""

from __future__ import annotations

import dataclasses
import json
import threading
import uuid
from pathlib import Path

import pytest

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    AssistantDelta,
    AssistantMessage,
    BlockFinished,
    Event,
    IterationStarted,
    Notification,
    SessionCreated,
    TurnEnded,
    TurnStarted,
    UsageReported,
    activity_to_dict,
    event_payload,
)
from vis_core.model.activity import ActivityRecord, ActivityState
from vis_core.model.turn import TurnStatus
from vis_core.model.usage import Usage, UsagePurpose
from vis_core.store import Store, StoreError

from .conftest import make_record, session_activities


def test_a_whole_turn_is_logged_and_projected(store: Store) -> None:
    sid = store.create_session("/w", "/w", title="demo").id
    tid = uuid.uuid4().hex
    events = [
        SessionCreated(sid, title="demo", workspace="/w"),
        TurnStarted(sid, turn_id=tid, position=0, request="count the files"),
        AssistantDelta(sid, turn_id=tid, text="Let me"),
        AssistantMessage(sid, turn_id=tid, iteration=0, text="Let me look."),
        IterationStarted(sid, turn_id=tid, iteration_id="it-1", index=0, code="print(len(ls()))"),
        BlockFinished(sid, turn_id=tid, iteration_id="it-1", stdout="3\n", duration=0.25),
        IterationStarted(
            sid, turn_id=tid, iteration_id="it-2", index=1, tool="cat", arguments={"path": "a.py"}
        ),
        BlockFinished(sid, turn_id=tid, iteration_id="it-2", error="NameError: x", restarted=True),
        AssistantMessage(sid, turn_id=tid, iteration=2, text="There are 3 files."),
        Notification(sid, text="hello"),
        TurnEnded(sid, turn_id=tid, status=TurnStatus.COMPLETED, content="There are 3 files."),
    ]
    seqs = [store.append(event) for event in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    logged = store.events(sid)
    assert [e.seq for e in logged] == seqs
    assert [e.event for e in logged] == events
    assert [e.data for e in logged] == [event.to_json() for event in events]
    assert [e.seq for e in store.events(sid, after_seq=seqs[4])] == seqs[5:]

    (turn,) = store.turns(sid)
    assert (turn.id, turn.position, turn.request) == (tid, 0, "count the files")
    assert turn.status is TurnStatus.COMPLETED
    assert turn.content == "There are 3 files."
    assert turn.replies == ("Let me look.", "There are 3 files.")
    assert turn.ended is not None

    first, second = store.iterations(tid)
    assert (first.index, first.tool, first.code) == (0, "python_execution", "print(len(ls()))")
    assert [(b.stdout, b.error, b.restarted, b.duration) for b in first.blocks] == [
        ("3\n", None, False, 0.25)
    ]
    assert second.arguments == {"path": "a.py"}
    assert second.blocks[0].error == "NameError: x" and second.blocks[0].restarted


def test_activities_are_upserted_by_id_and_keep_their_place(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    tid = uuid.uuid4().hex
    store.append(TurnStarted(sid, turn_id=tid, position=0, request="r"))
    first = make_record(sid, tid, activity_id="a1")
    second = make_record(sid, tid, activity_id="a2")
    store.append(ActivityStarted(sid, activity=first))
    store.append(ActivityStarted(sid, activity=second))
    updated = make_record(sid, tid, activity_id="a1", summary="src/app.py · 10 lines")
    store.append(ActivityUpdated(sid, activity=updated))
    ended = make_record(sid, tid, activity_id="a1", state=ActivityState.FAILED)
    store.append(ActivityEnded(sid, activity=ended))

    records = store.activities(tid)
    assert [r.id for r in records] == ["a1", "a2"]
    assert records[0] == ended
    assert activity_to_dict(records[0]) == activity_to_dict(ended)
    assert records[1] == second
    assert session_activities(store, sid) == records


def _activity_rows(store: Store) -> list[tuple[object, ...]]:
    with store._db.read() as conn:
        return conn.execute(
            "SELECT pos, id, turn_id, tool, tag, state, seq FROM activities ORDER BY pos"
        ).fetchall()


def test_a_batch_projects_activities_as_its_events_one_by_one_would(
    store: Store, tmp_path: Path
) -> None:
    """append_many upserts an activity once per batch, from its last event, at the place of
    its first: the rows (place, state, latest event) are those of appending one by one."""

    def events(sid: str) -> list[list[Event]]:
        def record(name: str, state: ActivityState, turn: str | None = "t") -> ActivityRecord:
            return make_record(sid, turn, activity_id=name, state=state, summary=state.value)

        running, done, failed = ActivityState.RUNNING, ActivityState.SUCCEEDED, ActivityState.FAILED
        return [
            [ActivityStarted(sid, activity=record("a0", running))],
            [
                ActivityStarted(sid, activity=record("a1", running)),  # started and ended here
                ActivityEnded(sid, activity=record("a0", failed)),  # started in the batch before
                ActivityStarted(sid, activity=record("a2", running)),
                ActivityUpdated(sid, activity=record("a2", running)),
                ActivityStarted(sid, activity=record("a1", running, None)),  # same id, no turn
                ActivityEnded(sid, activity=record("a1", done)),
                ActivityUpdated(sid, activity=None),
                ActivityStarted(sid, activity=record("a3", running)),
            ],
            [ActivityEnded(sid, activity=record("a2", done)), TurnStarted(sid, turn_id="t2")],
            [ActivityEnded(sid, activity=record("a3", done))],
        ]

    with Store(tmp_path / "one_by_one.db") as single:
        one = single.create_session("/w", "/w").id
        for group in events(one):
            for event in group:
                single.append(event)
        expected = _activity_rows(single)
    sid = store.create_session("/w", "/w").id
    for group in events(sid):
        store.append_many(group)
    assert _activity_rows(store) == expected
    assert [(r.id, r.state) for r in store.activities("t")] == [
        ("a0", ActivityState.FAILED),
        ("a1", ActivityState.SUCCEEDED),
        ("a2", ActivityState.SUCCEEDED),
        ("a3", ActivityState.SUCCEEDED),
    ]


def test_usage_is_summed_per_turn_and_session_without_double_counting(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    t1, t2 = uuid.uuid4().hex, uuid.uuid4().hex
    store.append(TurnStarted(sid, turn_id=t1, position=0, request="a"))
    store.append(UsageReported(sid, turn_id=t1, usage=Usage(100, 10, 5, 1), cost=0.5))
    store.append(UsageReported(sid, turn_id=t1, usage=Usage(200, 20), cost=0.25))
    store.append(TurnEnded(sid, turn_id=t1))  # no totals: the reported sums stay
    store.append(TurnStarted(sid, turn_id=t2, position=1, request="b"))
    store.append(UsageReported(sid, turn_id=t2, usage=Usage(50, 5), cost=0.1))
    store.append(
        TurnEnded(
            sid, turn_id=t2, status=TurnStatus.FAILED, usage=Usage(60, 6), cost=0.2, error="boom"
        )
    )
    turn1, turn2 = store.turns(sid)
    assert turn1.usage == Usage(300, 30, 5, 1) and turn1.cost == pytest.approx(0.75)
    assert turn2.usage == Usage(60, 6) and turn2.cost == pytest.approx(0.2)
    assert (turn2.status, turn2.error) == (TurnStatus.FAILED, "boom")
    session = store.get_session(sid)
    assert session is not None
    assert session.usage == Usage(360, 36, 5, 1)
    assert session.cost == pytest.approx(0.95)
    assert session.turn_count == 2


def test_turn_end_moves_the_session_modified_time(store: Store) -> None:
    session = store.create_session("/w", "/w")
    tid = uuid.uuid4().hex
    store.append(TurnStarted(session.id, turn_id=tid, position=0, request="a"))
    store.append(TurnEnded(session.id, turn_id=tid))
    after = store.get_session(session.id)
    assert after is not None and after.modified >= session.modified


def test_append_many_is_all_or_nothing(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    good = TurnStarted(sid, turn_id="t1", position=0, request="a")
    orphan = TurnStarted("no-such-session", turn_id="t2", position=0, request="b")
    with pytest.raises(StoreError, match="no session 'no-such-session'"):
        store.append_many([good, orphan])
    assert store.events(sid) == [] and store.turns(sid) == []
    assert store.append_many([]) == []
    seqs = store.append_many([good])
    assert [e.seq for e in store.events(sid)] == seqs


def test_event_for_an_unknown_session_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="create_session"):
        store.append(Notification("missing", text="x"))


def test_fast_encoding_matches_event_to_json(store: Store) -> None:
    sid = "s"
    events = [
        ActivityStarted(sid, activity=make_record(sid, "t")),
        ActivityEnded(sid, activity=make_record(sid, None, state=ActivityState.SUCCEEDED)),
        ActivityUpdated(sid, activity=None),
        UsageReported(sid, turn_id="t", usage=Usage(1, 2, 3, 4), cost=1.5),
        IterationStarted(sid, turn_id="t", iteration_id="i", arguments={"a": [1, {"b": "ü"}]}),
        TurnEnded(sid, turn_id="t", status=TurnStatus.CANCELLED, usage=Usage(1)),
    ]
    for event in events:
        data, payload = event_payload(event)
        assert payload == event.to_json()
        assert data == json.loads(event.to_json())


def test_an_activity_event_carries_every_record_field_in_order_and_round_trips() -> None:
    from vis_core.agent.invoker import ToolInvoker
    from vis_core.events import event_from_dict
    from vis_core.model.activity import ActivityRecord, field_names, to_plain

    running = make_record("s", "t")
    ended = ToolInvoker.ended(running, error=ValueError("bad"))  # copied, not constructed
    for record in (running, ended):
        event = ActivityEnded("s", activity=record)
        data = event.to_dict()
        assert tuple(data["activity"]) == field_names(ActivityRecord)
        assert data["activity"]["presentation"] == to_plain(record.presentation)
        assert data["activity"]["state"] == record.state.value
        assert event_from_dict(json.loads(event.to_json())) == event
    # one presentation, shared by both records, is made plain once; that changes nothing of it
    assert ended.presentation is running.presentation
    first = ActivityStarted("s", activity=running).to_dict()["activity"]["presentation"]
    second = ActivityEnded("s", activity=ended).to_dict()["activity"]["presentation"]
    assert first is second
    assert running.presentation == make_record("s", "t").presentation
    assert repr(running.presentation) == repr(make_record("s", "t").presentation)
    assert dataclasses.replace(running.presentation, summary="other").summary == "other"
    assert activity_to_dict(dataclasses.replace(running, presentation=None))["presentation"] is None


def test_threads_share_one_store(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(100):
                store.append(
                    ActivityStarted(sid, activity=make_record(sid, "t", activity_id=f"{n}-{i}"))
                )
                store.state_set(f"ext{n}", "count", i)
                store.get_session(sid)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.events(sid)) == 400
    assert len(store.activities("t")) == 400
    assert [store.state_get(f"ext{n}", "count") for n in range(4)] == [99] * 4


def test_event_json_is_compact_utf8_and_round_trips() -> None:
    from vis_core.events import TurnStarted, event_from_dict

    event = TurnStarted("s", turn_id="t", position=1, request='héllo — 你好 "quoted"\n')
    text = event.to_json()
    assert text == json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"))
    assert event_from_dict(json.loads(text)) == event


def test_why_a_request_was_made_is_read_back_as_its_kind(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    for purpose in UsagePurpose:
        store.append(UsageReported(sid, usage=Usage(10, 1), purpose=purpose))
    read = [e.event for e in store.events(sid) if isinstance(e.event, UsageReported)]
    assert [e.purpose for e in read] == list(UsagePurpose)
    assert all(type(e.purpose) is UsagePurpose for e in read)
    # a side call's or a child session's request is counted, but its size is not the
    # conversation's
    assert [p.measures_context for p in UsagePurpose] == [True, True, False, False]
