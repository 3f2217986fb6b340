"""Stored sessions as the plain dicts of ``list_sessions``/``read_session`` (the model's tools
and the SDK's): rows, search hits, transcripts, folds and fork points."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from vis_core.model.turn import TurnStatus

if TYPE_CHECKING:
    from vis_core.model.sessions import SearchHit, SessionRow, TurnRow
    from vis_core.store import Store

SESSION_MARKER = "vis_session_id#"  # what a person copies from the TUI

ORIGIN_STATE = "vis.session_origin"  # extension state namespace: session id -> creating extension
FORK_POINT_STATE = (
    "vis.session_fork_point"  # fork id -> {turn_id, position} of the last copied turn
)
SEARCH_FIELDS = ("title", "request", "reply", "thinking")  # the ranking order of matches
LIST_LIMIT = 1000
SEARCH_LIMIT = 100


def timestamp(seconds: float | None) -> str | None:
    """A stored time as ISO 8601 text in UTC."""
    if seconds is None:
        return None
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat()


def session_summary(row: SessionRow) -> dict[str, Any]:
    """One row of ``list_sessions``."""
    return {
        "id": row.id,
        "title": row.title,
        "turn_count": row.turn_count,
        "created_at": timestamp(row.created),
        "modified_at": timestamp(row.modified),
    }


def nested(rows: list[SessionRow]) -> list[tuple[SessionRow, int]]:
    """``rows`` with each child session right after the session that started it (its
    children oldest first), paired with its depth; a child whose parent is not among ``rows``
    keeps its place at depth 0."""
    listed = {row.id for row in rows}
    children: dict[str, list[SessionRow]] = {}
    for row in rows:
        if row.parent_id in listed:
            children.setdefault(row.parent_id, []).append(row)  # type: ignore[arg-type]
    out: list[tuple[SessionRow, int]] = []
    seen: set[str] = set()

    def add(row: SessionRow, depth: int) -> None:
        if row.id in seen:  # a loop in stored rows is shown once
            return
        seen.add(row.id)
        out.append((row, depth))
        for child in sorted(children.get(row.id, ()), key=lambda r: r.created):
            add(child, depth + 1)

    for row in rows:
        if row.parent_id not in listed:
            add(row, 0)
    for row in rows:  # rows only reachable through a loop of parents
        add(row, 0)
    return out


def _hit(hit: SearchHit) -> dict[str, Any]:
    row = session_summary(hit.session)
    row["rank"] = hit.rank
    for name in SEARCH_FIELDS:
        row[f"is_in_{name}"] = name in hit.fields
    row["snippet"] = hit.snippet
    row["snippets"] = dict(hit.snippets)
    return row


def search_rows(
    store: Store, search: str | None, limit: int | None = None, *, workspace: str | None = None
) -> list[dict[str, Any]]:
    """Every session newest first, or the matches of ``search``: title, request, reply, thinking;
    only ``workspace``'s sessions when it is given."""
    if search is None or not str(search).strip():
        rows = store.list_sessions(workspace, limit=limit or LIST_LIMIT)
        return [session_summary(row) for row in rows]
    if not isinstance(search, str):
        raise TypeError(f"list_sessions: search must be text, got {type(search).__name__}")
    wanted = limit or SEARCH_LIMIT
    if workspace is None:
        return [_hit(hit) for hit in store.search_sessions(search, limit=wanted)]
    hits = store.search_sessions(search, limit=wanted * 20)
    return [_hit(hit) for hit in hits if hit.session.workspace == workspace][:wanted]


def resolve_any(
    store: Store, session_id: object, what: str, *, workspace: str | None = None
) -> SessionRow:
    """The session for a bare id, an unambiguous prefix or a marker; LookupError if none.
    With ``workspace``, only that workspace's sessions are found (others stay unnamed)."""
    if not isinstance(session_id, str):
        raise TypeError(f"{what}: the session id must be text, got {type(session_id).__name__}")
    key = session_id.strip().removeprefix(SESSION_MARKER)
    if workspace is not None:
        return _resolve_in(store, key, what, workspace)
    try:
        row = store.get_session(session_id)
    except Exception as exc:  # an ambiguous prefix: the store says which sessions match
        raise LookupError(f"{what}: {exc}") from None
    if row is None:
        raise LookupError(
            f"{what}: no session {key!r}; vis.list_sessions() lists ids, and a prefix must match "
            "exactly one"
        )
    return row


def _resolve_in(store: Store, key: str, what: str, workspace: str) -> SessionRow:
    rows = store.list_sessions(workspace, limit=1_000_000)
    exact = [row for row in rows if row.id == key]
    found = exact or ([row for row in rows if row.id.startswith(key)] if key else [])
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        ids = ", ".join(row.id for row in found[:5])
        raise LookupError(f"{what}: the prefix {key!r} matches several sessions ({ids}); give more")
    raise LookupError(
        f"{what}: no session {key!r} in this workspace; list_sessions() lists its sessions. "
        "Sessions of other workspaces are reachable only with the setting sessions_scope = "
        "'all', which the person sets."
    )


def session_data(store: Store, row: SessionRow) -> dict[str, Any]:
    turns = store.turns(row.id)
    transcript = [_turn(store, turn) for turn in turns]
    running = [t for t in transcript if t["status"] == TurnStatus.RUNNING]
    failures = [
        {"turn_id": t["id"], "position": t["position"], "status": t["status"], "error": t["error"]}
        for t in transcript
        if t["status"] not in (TurnStatus.RUNNING, TurnStatus.COMPLETED)
    ]
    forks = [
        session_summary(other)
        for other in store.list_sessions(limit=LIST_LIMIT)
        if other.forked_from == row.id
    ]
    last = transcript[-1] if transcript else None
    diagnosis = None
    if last is not None and last["status"] == TurnStatus.FAILED:
        diagnosis = f"the last turn failed: {last['error'] or 'no error text was recorded'}"
    return {
        "session": _session(store, row),
        "current_turn": running[-1] if running else None,
        "failures": failures,
        "diagnosis": diagnosis,
        "session_forks": forks,
        "turn_retries": [],
        "usage": {
            "input": row.usage.input,
            "output": row.usage.output,
            "cache_read": row.usage.cache_read,
            "cache_write": row.usage.cache_write,
            "cost": row.cost,
        },
        "transcript": {"turns": transcript},
    }


def _fold_data(store: Store, session_id: str) -> dict[str, Any]:
    """``folds`` (each with its receipt estimate and measurement) and ``request_health``."""
    rows = store.folds(session_id)
    folds = [
        {
            "id": row.id,
            "key": row.key,
            "gist": row.gist,
            "origin": row.origin,
            "spans": [list(span) for span in row.spans],
            "turn_id": row.turn_id,
            "removed_tokens_estimate": row.removed_tokens,
            "created_at": timestamp(row.created),
            "fold_measurement": row.measurement(),
        }
        for row in rows
    ]
    health = {"fold_measurement": folds[-1]["fold_measurement"]} if folds else {}
    return {"folds": folds, "request_health": health}


def _session(store: Store, row: SessionRow) -> dict[str, Any]:
    data = session_summary(row)
    data.update(
        group=row.group,
        workspace=row.workspace,
        project_root=row.project_root,
        origin=store.state_get(ORIGIN_STATE, row.id),
        parent_id=row.parent_id,  # the session that started it (run_session, consult)
        forked_from=None,
        **_fold_data(store, row.id),  # session diagnostics: folds and request health
    )
    if row.forked_from:
        source = store.turns(row.forked_from)
        last = source[-1] if source else None
        point = store.state_get(FORK_POINT_STATE, row.id)
        if isinstance(point, dict):  # the last turn the fork copied, as it stands now
            last = next((t for t in source if t.id == point.get("turn_id")), last)
        data["forked_from"] = {
            "session_id": row.forked_from,
            "turn_id": last.id if last else None,
            "outcome": str(last.status) if last else None,
        }
    return data


def _turn(store: Store, turn: TurnRow) -> dict[str, Any]:
    iterations = [
        {
            "id": it.id,
            "index": it.index,
            "tool": it.tool,
            "blocks": [
                {"code": it.code, "stdout": block.stdout, "error": block.error}
                for block in it.blocks
            ],
        }
        for it in store.iterations(turn.id)
    ]
    return {
        "id": turn.id,
        "position": turn.position,
        "user_request": turn.request,
        "status": str(turn.status),
        "content": turn.content,
        "error": turn.error,
        "replies": list(turn.replies),
        "started_at": timestamp(turn.started),
        "ended_at": timestamp(turn.ended),
        "iterations": iterations,
    }
