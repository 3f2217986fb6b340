"""Session search over titles, requests, replies and thinking with SQLite FTS5."""

from __future__ import annotations

import re
import sqlite3

from vis_core.model.sessions import SNIPPET_MARK, SearchHit, SessionRow
from vis_core.store.database import Database
from vis_core.store.rows import SESSION_COLUMNS, session_row

# Field, FTS table, and how an FTS row maps to its session; the order is the ranking order.
_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("title", "search_titles", "SELECT s.id FROM sessions s WHERE s.num = search_titles.rowid"),
    (
        "request",
        "search_requests",
        "SELECT t.session_id FROM turns t WHERE t.num = search_requests.rowid",
    ),
    (
        "reply",
        "search_replies",
        "SELECT r.session_id FROM replies r WHERE r.seq = search_replies.rowid",
    ),
    (
        "thinking",
        "search_thinking",
        "SELECT k.session_id FROM thinking k WHERE k.seq = search_thinking.rowid",
    ),
)
_ORDER = [name for name, _, _ in _FIELDS]
MAX_ROWS_PER_FIELD = 5000


def fts_query(text: str) -> str | None:
    """Every word of ``text`` as a quoted prefix term (all must match); ``None`` if no words."""
    words = re.findall(r"\w+", text)
    return " ".join(f'"{word}"*' for word in words) if words else None


class SearchMixin:
    """``search_sessions``: title matches first, then request, reply, then thinking."""

    _db: Database

    def search_sessions(self, query: str, limit: int = 20) -> list[SearchHit]:
        match = fts_query(query)
        if match is None:
            return []
        found: dict[str, dict[str, tuple[float, int]]] = {}  # the best row of each field
        with self._db.read("search sessions") as conn:
            for name, table, owner in _FIELDS:
                rows = conn.execute(
                    f"SELECT ({owner}), rowid, rank FROM {table} "
                    f"WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
                    (match, MAX_ROWS_PER_FIELD),
                ).fetchall()
                for session_id, rowid, score in rows:
                    if session_id is None:
                        continue
                    fields = found.setdefault(session_id, {})
                    if name not in fields:  # rows come best first
                        fields[name] = (score, rowid)
            if not found:
                return []
            ids = list(found)
            sessions = {}
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for row in conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id IN ({marks})", chunk
                ):
                    sessions[row[0]] = session_row(row)
            hits = []
            for rank, session_id in enumerate(_ranked(found, sessions)[:limit], start=1):
                # snippets of the shown hits only: cut from every matching row, they cost most
                fields = found[session_id]
                shown = {
                    name: _snippet(conn, table, match, fields[name][1])
                    for name, table, _ in _FIELDS
                    if name in fields
                }
                names = tuple(shown)
                hits.append(
                    SearchHit(
                        session=sessions[session_id],
                        rank=rank,
                        fields=names,
                        snippet=shown[names[0]],
                        snippets=shown,
                    )
                )
        return hits


def _ranked(
    found: dict[str, dict[str, tuple[float, int]]], sessions: dict[str, SessionRow]
) -> list[str]:
    """The sessions found, best first: by their best field, its score, then the newest."""

    def key(session_id: str) -> tuple[int, float, float]:
        fields = found[session_id]
        best = min(_ORDER.index(name) for name in fields)
        return (best, fields[_ORDER[best]][0], -sessions[session_id].modified)

    return sorted((sid for sid in found if sid in sessions), key=key)


def _snippet(conn: sqlite3.Connection, table: str, match: str, rowid: int) -> str:
    """The snippet of row ``rowid`` of the search table ``table``, its matches marked."""
    row = conn.execute(
        f"SELECT snippet({table}, 0, ?, ?, '…', 12) FROM {table} WHERE {table} MATCH ? "
        "AND rowid = ?",
        (SNIPPET_MARK, SNIPPET_MARK, match, rowid),
    ).fetchone()
    return row[0] if row else ""
