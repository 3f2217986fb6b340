"""Projection of logged events onto the session, turn, iteration, block and activity tables."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    AssistantMessage,
    AssistantThinking,
    BackgroundCommandEnded,
    BlockFinished,
    DraftChanged,
    Event,
    FoldCreated,
    IterationStarted,
    TurnEnded,
    TurnStarted,
    UsageReported,
)
from vis_core.model.usage import Usage, UsagePurpose

_ADD_USAGE = (
    "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
    "cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?, "
    "cost = cost + ?"
)
# A later event of an activity sets no indexed column (pos, session_id, turn_id stay those
# of its first event), so it rewrites one table row and no index page. Its row is found
# by (turn_id, id), the one index of activities; turn_id is '' outside a turn.
UPSERT_ACTIVITY = (
    "INSERT INTO activities (id, pos, session_id, turn_id, tool, tag, state, seq) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, id) DO UPDATE SET "
    "tool = excluded.tool, tag = excluded.tag, state = excluded.state, seq = excluded.seq"
)

Projector = Callable[[sqlite3.Connection, int, Any, dict[str, Any], float], None]


def _touch(conn: sqlite3.Connection, session_id: str, now: float) -> None:
    conn.execute("UPDATE sessions SET modified = max(modified, ?) WHERE id = ?", (now, session_id))


def _turn_started(
    conn: sqlite3.Connection,
    seq: int,
    event: TurnStarted,
    data: dict[str, Any],
    now: float,
) -> None:
    (num,) = conn.execute(
        "INSERT INTO turns (id, session_id, position, request, started) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET position = excluded.position, request = excluded.request "
        "RETURNING num",
        (event.turn_id, event.session_id, event.position, event.request, now),
    ).fetchone()
    conn.execute("DELETE FROM search_requests WHERE rowid = ?", (num,))
    conn.execute("INSERT INTO search_requests (rowid, text) VALUES (?, ?)", (num, event.request))
    _touch(conn, event.session_id, now)


def _searchable_text(table: str, index: str) -> Any:
    """A projector keeping an event's ``text`` in ``table`` and in its FTS5 ``index``."""
    insert_row = (
        f"INSERT INTO {table} (seq, session_id, turn_id, iteration, text) VALUES (?, ?, ?, ?, ?)"
    )
    insert_text = f"INSERT INTO {index} (rowid, text) VALUES (?, ?)"

    def project(
        conn: sqlite3.Connection,
        seq: int,
        event: AssistantMessage | AssistantThinking,
        data: dict[str, Any],
        now: float,
    ) -> None:
        if not event.text:
            return
        conn.execute(
            insert_row, (seq, event.session_id, event.turn_id, event.iteration, event.text)
        )
        conn.execute(insert_text, (seq, event.text))

    return project


_assistant_message = _searchable_text("replies", "search_replies")
_assistant_thinking = _searchable_text("thinking", "search_thinking")


def _iteration_started(
    conn: sqlite3.Connection,
    seq: int,
    event: IterationStarted,
    data: dict[str, Any],
    now: float,
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO iterations (id, session_id, turn_id, idx, tool, code, arguments, "
        "started) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event.iteration_id,
            event.session_id,
            event.turn_id,
            event.index,
            event.tool,
            event.code,
            json.dumps(data["arguments"], ensure_ascii=False, separators=(",", ":")),
            now,
        ),
    )


def _block_finished(
    conn: sqlite3.Connection,
    seq: int,
    event: BlockFinished,
    data: dict[str, Any],
    now: float,
) -> None:
    conn.execute(
        "INSERT INTO blocks (seq, session_id, turn_id, iteration_id, stdout, error, restarted, "
        "duration) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            event.session_id,
            event.turn_id,
            event.iteration_id,
            event.stdout,
            event.error,
            int(event.restarted),
            event.duration,
        ),
    )


def _activity(
    conn: sqlite3.Connection,
    seq: int,
    event: ActivityStarted | ActivityUpdated | ActivityEnded,
    data: dict[str, Any],
    now: float,
    pos: int | None = None,
) -> None:
    """Upsert the row of ``event``'s activity; ``pos``: the seq of its first event when that
    one was not projected (see :func:`project_many`), else ``seq``."""
    if event.activity is not None:
        conn.execute(UPSERT_ACTIVITY, _activity_row(seq, event, data, seq if pos is None else pos))


def _activity_row(
    seq: int,
    event: ActivityStarted | ActivityUpdated | ActivityEnded,
    data: dict[str, Any],
    pos: int,
) -> tuple[Any, ...]:
    """The values :data:`UPSERT_ACTIVITY` writes for ``event`` (it has an activity)."""
    record, fields = event.activity, data["activity"]
    assert record is not None
    turn_id = record.turn_id or ""
    return (
        record.id,
        pos,
        event.session_id,
        turn_id,
        record.tool,
        fields["tag"],
        fields["state"],
        seq,
    )


def _fold_created(
    conn: sqlite3.Connection,
    seq: int,
    event: FoldCreated,
    data: dict[str, Any],
    now: float,
) -> None:
    conn.execute(
        "INSERT INTO folds (seq, id, session_id, turn_id, key, gist, spans, origin, "
        "removed_tokens, model, before_input_tokens, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            event.fold_id,
            event.session_id,
            event.turn_id,
            event.key,
            event.gist,
            json.dumps(event.spans),
            event.origin,
            event.removed_tokens,
            event.model,
            event.before_input_tokens,
            now,
        ),
    )


def _draft_changed(
    conn: sqlite3.Connection,
    seq: int,
    event: DraftChanged,
    data: dict[str, Any],
    now: float,
) -> None:
    if event.turn_id:
        conn.execute(
            "INSERT INTO draft_marks (seq, session_id, turn_id, text) VALUES (?, ?, ?, ?)",
            (seq, event.session_id, event.turn_id, event.text),
        )


def _background_command_ended(
    conn: sqlite3.Connection,
    seq: int,
    event: BackgroundCommandEnded,
    data: dict[str, Any],
    now: float,
) -> None:
    conn.execute(
        "INSERT INTO background_commands (seq, session_id, turn_id, handle_id, command, state, "
        "runtime) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            event.session_id,
            event.turn_id,
            event.handle_id,
            event.command,
            event.state,
            event.runtime,
        ),
    )


def _measure_folds(conn: sqlite3.Connection, event: UsageReported) -> None:
    """The folds made since the last request share the measurement of this response."""
    pending = conn.execute(
        "SELECT turn_id, model, before_input_tokens, origin FROM folds "
        "WHERE session_id = ? AND status = 'pending' ORDER BY seq",
        (event.session_id,),
    ).fetchall()
    if not pending:
        return
    _, model, before, _ = pending[0]
    after = event.context_tokens
    # /compact folds between turns: the next turn's first request measures it
    if any(row[0] != event.turn_id and row[3] != "compact" for row in pending):
        status, reason = "unavailable", "the turn changed"
    elif not model or not event.model:
        status, reason = "unavailable", "the provider or model is unknown"
    elif any(row[1] != event.model for row in pending):
        status, reason = "unavailable", "the provider or model changed"
    elif not after or not before:
        status, reason = "unavailable", "usage is missing"
    else:
        status, reason = "measured", None
    conn.execute(
        "UPDATE folds SET status = ?, reason = ?, after_input_tokens = ?, fold_count = ? "
        "WHERE session_id = ? AND status = 'pending'",
        (status, reason, after or None, len(pending), event.session_id),
    )


def _usage_values(usage: Usage, cost: float) -> tuple[float, ...]:
    return (usage.input, usage.output, usage.cache_read, usage.cache_write, cost)


def _usage_reported(
    conn: sqlite3.Connection,
    seq: int,
    event: UsageReported,
    data: dict[str, Any],
    now: float,
) -> None:
    if event.purpose == UsagePurpose.CONVERSATION:  # not a side call, not a refused one
        _measure_folds(conn, event)
    values = _usage_values(event.usage, event.cost)
    if event.turn_id:
        conn.execute(f"UPDATE turns SET {_ADD_USAGE} WHERE id = ?", (*values, event.turn_id))
    conn.execute(f"UPDATE sessions SET {_ADD_USAGE} WHERE id = ?", (*values, event.session_id))


def _turn_ended(
    conn: sqlite3.Connection,
    seq: int,
    event: TurnEnded,
    data: dict[str, Any],
    now: float,
) -> None:
    if event.usage.total or event.cost:
        # TurnEnded carries the turn's totals: replace what UsageReported summed so far and
        # move the session totals by the difference, so nothing is counted twice.
        row = conn.execute(
            "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost "
            "FROM turns WHERE id = ?",
            (event.turn_id,),
        ).fetchone()
        old = row if row is not None else (0, 0, 0, 0, 0.0)
        new = _usage_values(event.usage, event.cost)
        delta = tuple(n - o for n, o in zip(new, old, strict=True))
        conn.execute(
            "UPDATE turns SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, "
            "cache_write_tokens = ?, cost = ? WHERE id = ?",
            (*new, event.turn_id),
        )
        conn.execute(f"UPDATE sessions SET {_ADD_USAGE} WHERE id = ?", (*delta, event.session_id))
    conn.execute(
        "UPDATE turns SET status = ?, content = ?, error = ?, ended = ? WHERE id = ?",
        (str(event.status), event.content, event.error, now, event.turn_id),
    )
    _touch(conn, event.session_id, now)


PROJECTORS: dict[str, Projector] = {
    TurnStarted.type: _turn_started,
    AssistantMessage.type: _assistant_message,
    AssistantThinking.type: _assistant_thinking,
    IterationStarted.type: _iteration_started,
    BlockFinished.type: _block_finished,
    ActivityStarted.type: _activity,
    ActivityUpdated.type: _activity,
    ActivityEnded.type: _activity,
    UsageReported.type: _usage_reported,
    FoldCreated.type: _fold_created,
    BackgroundCommandEnded.type: _background_command_ended,
    DraftChanged.type: _draft_changed,
    TurnEnded.type: _turn_ended,
}


def project(
    conn: sqlite3.Connection, seq: int, event: Event, data: dict[str, Any], now: float
) -> None:
    """Update the projection tables for one event already written to the log as ``seq``."""
    projector = PROJECTORS.get(event.type)
    if projector is not None:
        projector(conn, seq, event, data, now)


_ACTIVITY_EVENTS = (ActivityStarted, ActivityUpdated, ActivityEnded)
Logged = tuple[int, Event, dict[str, Any]]  # (seq, event, data)


def project_many(conn: sqlite3.Connection, logged: list[Logged], now: float) -> None:
    """Project events logged in one transaction, in order, as :func:`project` one by one
    would, with fewer writes: an activity with several events among them (a call's start and
    end, committed together) is upserted once, from its last event, at the place (``pos``)
    of its first, which is the row the upserts of each event would leave."""
    last: dict[tuple[str, str], int] = {}  # (turn_id, id) of an activity -> its last event
    for index, (_seq, event, _data) in enumerate(logged):
        if isinstance(event, _ACTIVITY_EVENTS) and event.activity is not None:
            last[(event.activity.turn_id or "", event.activity.id)] = index
    first: dict[tuple[str, str], int] = {}  # (turn_id, id) -> seq of its first event
    rows: list[tuple[Any, ...]] = []  # upserts not written yet: one statement per run of them
    for index, (seq, event, data) in enumerate(logged):
        if not isinstance(event, _ACTIVITY_EVENTS) or event.activity is None:
            if rows:
                conn.executemany(UPSERT_ACTIVITY, rows)
                rows = []
            project(conn, seq, event, data, now)
            continue
        key = (event.activity.turn_id or "", event.activity.id)
        pos = first.setdefault(key, seq)
        if last[key] == index:
            rows.append(_activity_row(seq, event, data, pos))
    if rows:
        conn.executemany(UPSERT_ACTIVITY, rows)
