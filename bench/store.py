"""Benchmark of the store: 100,000 activity events, then reading one page of 50 activities.

The first mode is the engine's path (``AgentSession.emit`` calls ``Store.append``: one
commit per event, before the event is published); the second batches for comparison.
Events are built before the clock starts; their serialization is timed (``append`` does it).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from vis_core.events import ActivityEnded, ActivityStarted, Event
from vis_core.model.activity import (
    ActivityCode,
    ActivityPresentation,
    ActivityRecord,
    ActivityState,
    SymbolTag,
)
from vis_core.store import Store


def activity_events(session_id: str, turn_id: str, pairs: int) -> list[Event]:
    """``pairs`` ActivityStarted/ActivityEnded pairs of realistic ``cat`` calls."""
    events: list[Event] = []
    for n in range(pairs):
        started = ActivityRecord(
            id=uuid.uuid4().hex,
            session_id=session_id,
            turn_id=turn_id,
            iteration_id=f"it-{n // 10}",
            tool="cat",
            tag=SymbolTag.OBSERVATION,
            state=ActivityState.RUNNING,
            presentation=ActivityPresentation(headline="Read", summary=f"src/module_{n}.py"),
            started_at=1_700_000_000.0 + n,
        )
        ended = ActivityRecord(
            **{
                **started.__dict__,
                "state": ActivityState.SUCCEEDED,
                "ended_at": started.started_at + 0.01,
                "presentation": ActivityPresentation(
                    headline="Read",
                    summary=f"src/module_{n}.py · 40 lines",
                    content=(
                        ActivityCode(code=f"def f{n}():\n    return {n}\n", language="python"),
                    ),
                ),
            }
        )
        events.append(ActivityStarted(session_id, activity=started))
        events.append(ActivityEnded(session_id, activity=ended))
    return events


def run(count: int, batch: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for mode in ("append (one commit per event)", f"append_many (batches of {batch})"):
            path = Path(folder) / f"bench-{uuid.uuid4().hex}.db"
            with Store(path) as store:
                session = store.create_session(folder, folder, title="bench")
                events = activity_events(session.id, uuid.uuid4().hex, count // 2)
                start = time.perf_counter()
                cpu_start = time.process_time()
                if mode.startswith("append_many"):
                    for i in range(0, len(events), batch):
                        store.append_many(events[i : i + batch])
                else:
                    for event in events:
                        store.append(event)
                total = time.perf_counter() - start
                cpu = time.process_time() - cpu_start
                page_times = []
                before = None
                for _ in range(20):
                    t0 = time.perf_counter()
                    page = store.activities_page(session.id, before=before, limit=50)
                    page_times.append(time.perf_counter() - t0)
                    before = page.before
                first = store.activities_page(session.id, limit=50)
                assert len(first.activities) == 50
            print(
                f"{mode}: {len(events):,} events in {total:.2f} s "
                f"({len(events) / total:,.0f} events/s; target <= 5 s; "
                f"{cpu:.2f} s CPU, all threads)"
            )
            print(
                f"  page of 50 activities at the end: first {page_times[0] * 1000:.2f} ms, "
                f"median of 20 pages {statistics.median(page_times) * 1000:.2f} ms "
                "(target <= 5 ms)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    run(args.events, args.batch)


if __name__ == "__main__":
    main()
