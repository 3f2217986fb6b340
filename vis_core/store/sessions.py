"""Sessions, groups and the read side of turns, iterations, blocks and activities."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vis_core.events import activity_from_dict
from vis_core.model.activity import ActivityRecord
from vis_core.model.block import PYTHON_EXECUTION
from vis_core.model.sessions import SessionRow, TurnRow
from vis_core.model.story import StoryKind
from vis_core.store.database import Database, StoreError
from vis_core.store.rows import (
    SESSION_COLUMNS,
    TURN_COLUMNS,
    BlockRow,
    GroupRow,
    IterationRow,
    session_row,
    turn_row,
)
from vis_core.store.schema import SESSION_EVENTS
from vis_core.store.writer import StoreWriter, off_the_loop

SESSION_MARKER = "vis_session_id#"


class SessionsMixin:
    """Session rows and the transcript projections, read back as frozen rows."""

    _db: Database
    writer: StoreWriter
    text_redactor: Callable[[str], str] | None

    def _clean(self, text: str) -> str:
        """``text`` with saved secrets replaced, as titles and their search index keep it."""
        return text if self.text_redactor is None else self.text_redactor(text)

    # -- sessions and groups -------------------------------------------------------------

    def create_session(
        self,
        workspace: Path | str,
        project_root: Path | str,
        title: str = "",
        group: str | None = None,
        forked_from: str | None = None,
    ) -> SessionRow:
        """Create a session (id: uuid4 hex) and return its row (a child session's parent is
        set with :meth:`set_parent`)."""
        session_id = uuid.uuid4().hex
        now = time.time()
        title = self._clean(title)
        with self._db.write("create a session") as conn:
            if group is not None:
                _ensure_group(conn, group, now)
            (num,) = conn.execute(
                "INSERT INTO sessions (id, title, group_name, workspace, project_root, created, "
                "modified, forked_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING num",
                (
                    session_id,
                    title,
                    group,
                    str(workspace),
                    str(project_root),
                    now,
                    now,
                    forked_from,
                ),
            ).fetchone()
            if title:
                conn.execute("INSERT INTO search_titles (rowid, text) VALUES (?, ?)", (num, title))
        row = self.get_session(session_id)
        assert row is not None
        return row

    def get_session(self, id_or_prefix: str, *, exact: bool = False) -> SessionRow | None:
        """The session with this id, unambiguous id prefix or ``vis_session_id#<id>`` marker;
        ``exact``: only the whole id names it (a protocol's client, which goes on with the id
        it gave)."""
        key = id_or_prefix if exact else id_or_prefix.strip()
        if not exact and key.startswith(SESSION_MARKER):
            key = key[len(SESSION_MARKER) :]
        if not key:
            return None
        with self._db.read("read a session") as conn:
            rows = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (key,)
            ).fetchall()
            if not rows and not exact:
                rows = conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id >= ? AND s.id < ? "
                    "ORDER BY s.id LIMIT 2",
                    (key, key + "\uffff"),
                ).fetchall()
        if len(rows) > 1:
            raise StoreError(
                f"the session id prefix {key!r} matches more than one session "
                f"({rows[0][0]}, {rows[1][0]}, ...); type more characters of the id"
            )
        return session_row(rows[0]) if rows else None

    def list_sessions(
        self, workspace: Path | str | None = None, limit: int = 50
    ) -> list[SessionRow]:
        """Sessions newest (last modified) first, optionally of one workspace."""
        with self._db.read("list sessions") as conn:
            if workspace is None:
                rows = conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions s "
                    "ORDER BY s.modified DESC, s.num DESC LIMIT ?",
                    (limit,),
                ).fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.workspace = ? "
                    "ORDER BY s.modified DESC, s.num DESC LIMIT ?",
                    (str(workspace), limit),
                ).fetchall()
        return [session_row(row) for row in rows]

    def latest_session(self, workspace: Path | str) -> SessionRow | None:
        """The most recently modified session of ``workspace`` that a person started and
        worked in (a child session, started by another session's ``run_session``, is not one
        to continue; one that only showed a command's output, ``vis run "/context"``, is no
        work to continue): else the latest one a person started."""
        with self._db.read("find the latest session") as conn:
            rows = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.workspace = ? "
                "AND s.parent_id IS NULL ORDER BY s.modified DESC, s.num DESC",
                (str(workspace),),
            )
            first = None
            for row in rows:
                first = first or row
                if row[1] or _used(conn, row[0], commands_keep=False):  # titled, or used
                    return session_row(row)
        return session_row(first) if first else None

    def children(self, session_id: str) -> list[SessionRow]:
        """The sessions ``session_id`` started (``run_session``, ``consult``), oldest first."""
        with self._db.read("list child sessions") as conn:
            rows = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.parent_id = ? ORDER BY s.num",
                (session_id,),
            ).fetchall()
        return [session_row(row) for row in rows]

    def running_turns(self, session_id: str) -> list[str]:
        """Ids of the session's turns that never ended (a Vis that was killed mid-turn)."""
        with self._db.read("find unfinished turns") as conn:
            rows = conn.execute(
                "SELECT id FROM turns WHERE session_id = ? AND status = 'running' ORDER BY num",
                (session_id,),
            ).fetchall()
        return [row[0] for row in rows]

    def set_title(self, session_id: str, title: str) -> None:
        """Committed by the writer (see :func:`off_the_loop`)."""
        title = self._clean(title)

        def write() -> None:
            with self._db.write("set a session title") as conn:
                num = _session_num(conn, session_id)
                conn.execute("UPDATE sessions SET title = ? WHERE num = ?", (title, num))
                conn.execute("DELETE FROM search_titles WHERE rowid = ?", (num,))
                if title:
                    conn.execute(
                        "INSERT INTO search_titles (rowid, text) VALUES (?, ?)", (num, title)
                    )

        off_the_loop(self.writer, "set a session title", write)

    def set_parent(self, session_id: str, parent_id: str | None) -> None:
        """Record the session that started ``session_id`` (a child session)."""
        with self._db.write("set a session's parent") as conn:
            conn.execute("UPDATE sessions SET parent_id = ? WHERE id = ?", (parent_id, session_id))

    def set_group(self, session_id: str, group: str | None) -> None:
        """Move a session into ``group`` (created when new), or out of any group with ``None``."""
        with self._db.write("set a session group") as conn:
            num = _session_num(conn, session_id)
            if group is not None:
                _ensure_group(conn, group, time.time())
            conn.execute("UPDATE sessions SET group_name = ? WHERE num = ?", (group, num))

    def groups(self) -> list[GroupRow]:
        with self._db.read("list groups") as conn:
            rows = conn.execute("SELECT name, created FROM groups ORDER BY name").fetchall()
        return [GroupRow(*row) for row in rows]

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and everything recorded for it; ``False`` when there was none."""
        return self._delete(session_id, only_unused=False)

    def delete_if_unused(self, session_id: str, *, commands_keep: bool = True) -> bool:
        """Delete a session nobody used (opening Vis and quitting): no turn, no title, no
        child, no override, no draft and no event but its creation (a command run in it, a
        model chosen for it, keep it). With ``commands_keep`` False, a command that only
        showed something (``vis run "/context"`` in a new session) does not keep it; what a
        command kept for it (a goal, plan mode: state under its id) does. ``True`` when it
        went."""
        return self._delete(session_id, only_unused=True, commands_keep=commands_keep)

    def unused_sessions(self, workspace: Path | str, before: float) -> list[str]:
        """The ids of ``workspace``'s sessions a person started before ``before`` (a
        ``time.time()``) that nobody used, as :meth:`delete_if_unused` tells them."""
        with self._db.read("find unused sessions") as conn:
            rows = conn.execute(
                "SELECT id FROM sessions WHERE workspace = ? AND parent_id IS NULL "
                "AND title = '' AND created < ?",
                (str(workspace), before),
            ).fetchall()
            return [session_id for (session_id,) in rows if not _used(conn, session_id)]

    def _delete(self, session_id: str, *, only_unused: bool, commands_keep: bool = True) -> bool:
        with self._db.write("delete a session") as conn:
            row = conn.execute(
                "SELECT num, title FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None or (
                only_unused and (row[1] or _used(conn, session_id, commands_keep=commands_keep))
            ):
                return False
            conn.execute("DELETE FROM search_titles WHERE rowid = ?", (row[0],))
            conn.execute(
                "DELETE FROM search_requests WHERE rowid IN "
                "(SELECT num FROM turns WHERE session_id = ?)",
                (session_id,),
            )
            conn.execute(
                "DELETE FROM search_replies WHERE rowid IN "
                "(SELECT seq FROM replies WHERE session_id = ?)",
                (session_id,),
            )
            conn.execute(
                "DELETE FROM setting_overrides WHERE scope = 'session' AND owner = ?", (session_id,)
            )
            conn.execute(  # the log keeps no foreign key: its rows go through the runs
                f"DELETE FROM events WHERE seq IN (SELECT e.seq {SESSION_EVENTS})",
                {"session": session_id, "first": 0},
            )
            conn.execute("DELETE FROM sessions WHERE num = ?", (row[0],))
        return True

    # -- transcript ----------------------------------------------------------------------

    def turns(self, session_id: str) -> list[TurnRow]:
        """Every turn of a session by position, with the replies of each."""
        return self._turns(session_id, None, None)

    def turns_page(
        self, session_id: str, before_position: int | None = None, limit: int = 20
    ) -> list[TurnRow]:
        """Up to ``limit`` turns before ``before_position`` (the latest ones), by position."""
        return self._turns(session_id, before_position, limit)

    def _turns(self, session_id: str, before: int | None, limit: int | None) -> list[TurnRow]:
        bound = before if before is not None else 2**62
        with self._db.read("read turns") as conn:
            rows = conn.execute(
                f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = ? AND position < ? "
                "ORDER BY position DESC, num DESC LIMIT ?",
                (session_id, bound, -1 if limit is None else limit),
            ).fetchall()
            rows.reverse()
            replies: dict[str, list[str]] = {}
            ids = [row[0] for row in rows]
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for turn_id, text in conn.execute(
                    f"SELECT turn_id, text FROM replies WHERE turn_id IN ({marks}) ORDER BY seq",
                    chunk,
                ):
                    replies.setdefault(turn_id, []).append(text)
        return [turn_row(row, tuple(replies.get(row[0], ()))) for row in rows]

    def iterations(self, turn_id: str) -> list[IterationRow]:
        """The iterations of a turn by index, each with its blocks."""
        with self._db.read("read iterations") as conn:
            rows = conn.execute(
                "SELECT id, turn_id, idx, tool, code, arguments, started FROM iterations "
                "WHERE turn_id = ? ORDER BY idx, started",
                (turn_id,),
            ).fetchall()
            blocks: dict[str, list[BlockRow]] = {}
            for row in conn.execute(
                "SELECT iteration_id, stdout, error, restarted, duration FROM blocks "
                "WHERE turn_id = ? ORDER BY seq",
                (turn_id,),
            ):
                blocks.setdefault(row[0], []).append(
                    BlockRow(row[0], row[1], row[2], bool(row[3]), row[4])
                )
        return [
            IterationRow(
                id=row[0],
                turn_id=row[1],
                index=row[2],
                tool=row[3],
                code=row[4],
                arguments=json.loads(row[5]),
                started=row[6],
                blocks=tuple(blocks.get(row[0], ())),
            )
            for row in rows
        ]

    def turn_story(self, session_id: str, turn_id: str) -> list[tuple[int, StoryKind, Any]]:
        """What a turn showed, in the order it happened: ``(seq, kind, value)`` with kind
        ``reply`` (text), ``thinking`` (text), ``block`` ((error, restarted) of a call that
        failed or restarted the sandbox; a ``python_execution`` block's error is None: its
        row says it), ``code`` (every ``python_execution`` block: its iteration id, code and
        ``BlockFinished`` event as JSON text, placed at that event), ``fold`` (key, gist,
        spans and origin of a fold made in the turn), ``background`` (a command left running
        that reported its end) and ``activity`` (its id, placed by its first event)."""
        asked = {"session": session_id, "turn": turn_id, "python": PYTHON_EXECUTION}
        with self._db.read("read a turn's story") as conn:
            story = [
                (row[0], kind, value(*row[1:]))
                for kind, query, value in _STORY
                for row in conn.execute(query, asked)
            ]
        story.sort(key=lambda entry: entry[0])
        return story

    def activities(self, turn_id: str) -> list[ActivityRecord]:
        """The activities of a turn in the order they started."""
        with self._db.read("read activities") as conn:
            rows = conn.execute(
                "SELECT e.data FROM activities AS a JOIN events AS e ON e.seq = a.seq "
                "WHERE a.turn_id = ? ORDER BY a.pos",
                (turn_id,),
            ).fetchall()
        return [activity_from_dict(json.loads(row[0])["activity"]) for row in rows]


# Each kind of entry of a turn's story (:meth:`SessionsMixin.turn_story`), the query of its
# rows (the place it happened first) and the value it makes of the rest of a row.
_STORY: tuple[tuple[StoryKind, str, Callable[..., Any]], ...] = (
    (StoryKind.REPLY, "SELECT seq, text FROM replies WHERE turn_id = :turn", lambda text: text),
    (
        StoryKind.THINKING,
        "SELECT seq, text FROM thinking WHERE session_id = :session AND turn_id = :turn",
        lambda text: text,
    ),
    (
        StoryKind.CODE,
        "SELECT b.seq, i.id, i.code, e.data FROM iterations AS i "
        "JOIN blocks AS b ON b.iteration_id = i.id AND b.turn_id = i.turn_id "
        "JOIN events AS e ON e.seq = b.seq WHERE i.turn_id = :turn AND i.tool = :python",
        lambda iteration, code, ended: {"iteration_id": iteration, "code": code, "ended": ended},
    ),
    (
        StoryKind.BLOCK,
        "SELECT b.seq, b.error, b.restarted, i.tool FROM iterations AS i "
        "JOIN blocks AS b ON b.iteration_id = i.id "
        "WHERE i.turn_id = :turn AND (b.error IS NOT NULL OR b.restarted)",
        lambda error, restarted, tool: (
            error if tool != PYTHON_EXECUTION else None,
            bool(restarted),
        ),
    ),
    (
        StoryKind.FOLD,
        "SELECT seq, key, gist, spans, origin FROM folds "
        "WHERE session_id = :session AND turn_id = :turn",
        lambda key, gist, spans, by: {
            "key": key,
            "gist": gist,
            "spans": json.loads(spans),
            "origin": by,
        },
    ),
    (
        StoryKind.BACKGROUND,
        "SELECT seq, handle_id, command, state, runtime FROM background_commands "
        "WHERE turn_id = :turn AND session_id = :session",
        lambda h, c, st, rt: {"handle_id": h, "command": c, "state": st, "runtime": rt},
    ),
    (
        StoryKind.DRAFT,
        "SELECT seq, text FROM draft_marks WHERE turn_id = :turn AND session_id = :session",
        lambda text: text,
    ),
    (StoryKind.ACTIVITY, "SELECT pos, id FROM activities WHERE turn_id = :turn", lambda id_: id_),
)

_KEPT_WITH = (  # what makes a session worth keeping, besides its title and its events
    "SELECT 1 FROM turns WHERE session_id = :session",
    "SELECT 1 FROM sessions WHERE parent_id = :session",
    "SELECT 1 FROM setting_overrides WHERE scope = 'session' AND owner = :session",
    "SELECT 1 FROM drafts WHERE session_id = :session",
    "SELECT 1 FROM attachments WHERE session_id = :session",
)
_USES = (*_KEPT_WITH, f"SELECT 1 {SESSION_EVENTS} AND e.type != 'SessionCreated'")
# the same when a command that only showed something (a noted command) does not count, and
# what a command kept for the session does (a goal, plan mode: state under its id)
_WORK = (
    *_KEPT_WITH,
    f"SELECT 1 {SESSION_EVENTS} AND e.type NOT IN ('SessionCreated', 'CommandNoted')",
    "SELECT 1 FROM extension_state WHERE key = :session",
)


def _used(conn: sqlite3.Connection, session_id: str, *, commands_keep: bool = True) -> bool:
    return any(
        conn.execute(f"{query} LIMIT 1", {"session": session_id, "first": 0}).fetchone()
        for query in (_USES if commands_keep else _WORK)
    )


def _ensure_group(conn: sqlite3.Connection, name: str, now: float) -> None:
    if not name.strip():
        raise ValueError("a group name must not be blank")
    conn.execute(
        "INSERT INTO groups (name, created) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        (name, now),
    )


def _session_num(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute("SELECT num FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise StoreError(f"there is no session {session_id!r}; list sessions to find its id")
    return int(row[0])
