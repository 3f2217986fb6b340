"""Fixtures of the store tests: a fresh database file and event builders."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from vis_core.events import activity_from_dict
from vis_core.model.activity import (
    ActivityCode,
    ActivityPresentation,
    ActivityRecord,
    ActivitySection,
    ActivityState,
    ActivityTable,
    SymbolTag,
)
from vis_core.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "vis.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    with Store(db_path) as opened:
        yield opened


def make_record(
    session_id: str,
    turn_id: str | None,
    *,
    activity_id: str | None = None,
    state: ActivityState = ActivityState.RUNNING,
    summary: str = "src/app.py",
) -> ActivityRecord:
    return ActivityRecord(
        id=activity_id or uuid.uuid4().hex,
        session_id=session_id,
        turn_id=turn_id,
        iteration_id="it-1",
        tool="cat",
        tag=SymbolTag.OBSERVATION,
        state=state,
        presentation=ActivityPresentation(
            "Read",
            summary,
            content=(ActivityCode("x = 1\n", "python", path="src/app.py"),),
            sections=(
                ActivitySection("Rows", "2 rows", (ActivityTable(("a",), (("1",), ("2",))),)),
            ),
            verdict="passed",
        ),
        started_at=1000.0,
        ended_at=None if state is ActivityState.RUNNING else 1001.5,
        handle_id="h1",
        form=2,
    )


def session_activities(store: Store, session_id: str) -> list[ActivityRecord]:
    """Every activity of a session (in a turn or not) in the order they started, as the
    store's projection holds them."""
    with store._db.read() as conn:
        rows = conn.execute(
            "SELECT e.data FROM activities AS a JOIN events AS e ON e.seq = a.seq "
            "WHERE a.session_id = ? ORDER BY a.pos",
            (session_id,),
        ).fetchall()
    return [activity_from_dict(json.loads(row[0])["activity"]) for row in rows]
