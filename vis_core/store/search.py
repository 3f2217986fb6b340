"""Session search over titles, requests, replies and thinking with SQLite FTS5."""

from __future__ import annotations

import re

from vis_core.model.sessions import SNIPPET_MARK, SearchHit
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
        found: dict[str, dict[str, tuple[float, str]]] = {}
        with self._db.read("search sessions") as conn:
            for name, table, owner in _FIELDS:
                rows = conn.execute(
                    f"SELECT ({owner}), snippet({table}, 0, ?, ?, '…', 12), rank FROM {table} "
                    f"WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
                    (SNIPPET_MARK, SNIPPET_MARK, match, MAX_ROWS_PER_FIELD),
                ).fetchall()
                for session_id, snippet, score in rows:
                    if session_id is None:
                        continue
                    fields = found.setdefault(session_id, {})
                    if name not in fields:  # rows come best first
                        fields[name] = (score, snippet)
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
        order = [name for name, _, _ in _FIELDS]

        def key(session_id: str) -> tuple[int, float, float]:
            fields = found[session_id]
            best = min(order.index(name) for name in fields)
            return (best, fields[order[best]][0], -sessions[session_id].modified)

        ranked = sorted((sid for sid in found if sid in sessions), key=key)[:limit]
        hits = []
        for rank, session_id in enumerate(ranked, start=1):
            fields = found[session_id]
            names = tuple(name for name in order if name in fields)
            hits.append(
                SearchHit(
                    session=sessions[session_id],
                    rank=rank,
                    fields=names,
                    snippet=fields[names[0]][1],
                    snippets={name: fields[name][1] for name in names},
                )
            )
        return hits
