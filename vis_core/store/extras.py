"""Prompt history, extension state, settings overrides and sandbox snapshots."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from vis_core.model.plain import check_plain
from vis_core.store.database import Database
from vis_core.store.rows import OverrideScope, PromptRow
from vis_core.store.writer import StoreWriter, off_the_loop


def to_json(value: Any, what: str) -> str:
    """``value`` as compact JSON, after checking it is plain data."""
    check_plain(value, what)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ExtrasMixin:
    """Per-session prompts and snapshots, per-extension state, group/session overrides."""

    _db: Database
    writer: StoreWriter
    text_redactor: Callable[[str], str] | None

    # -- prompt history ------------------------------------------------------------------

    def add_prompt(self, session_id: str, text: str) -> bool | None:
        """Remember a prompt; ``False`` (nothing saved) when blank or equal to the last one.
        On a loop's thread the writer saves it (None at once, see :func:`off_the_loop`)."""
        if not text.strip():
            return False
        if self.text_redactor is not None:
            text = self.text_redactor(text)

        def write() -> bool:
            with self._db.write("save a prompt") as conn:
                last = conn.execute(
                    "SELECT text FROM prompts WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
                if last is not None and last[0] == text:
                    return False
                conn.execute(
                    "INSERT INTO prompts (session_id, text, created) VALUES (?, ?, ?)",
                    (session_id, text, time.time()),
                )
            return True

        return off_the_loop(self.writer, "save a prompt", write)

    def prompts(self, session_id: str, limit: int | None = None) -> list[PromptRow]:
        """A session's prompt history, oldest first (the latest ``limit`` when given)."""
        with self._db.read("read prompt history") as conn:
            rows = conn.execute(
                "SELECT id, session_id, text, created FROM prompts WHERE session_id = ? "
                "ORDER BY id DESC LIMIT ?",
                (session_id, -1 if limit is None else limit),
            ).fetchall()
        return [PromptRow(*row) for row in reversed(rows)]

    # -- extension state -----------------------------------------------------------------

    def state_get(self, extension: str, key: str, default: Any = None) -> Any:
        with self._db.read("read extension state") as conn:
            row = conn.execute(
                "SELECT value FROM extension_state WHERE extension = ? AND key = ?",
                (extension, key),
            ).fetchone()
        return default if row is None else json.loads(row[0])

    def state_set(self, extension: str, key: str, value: Any) -> None:
        """Store plain data under ``key``; ``None`` removes the key (committed by the writer,
        see :func:`off_the_loop`)."""
        if value is None:
            self.state_delete(extension, key)
            return
        data = to_json(value, f"the state value {key!r} of extension {extension!r}")
        now = time.time()

        def write() -> None:
            with self._db.write("write extension state") as conn:
                conn.execute(
                    "INSERT INTO extension_state (extension, key, value, modified) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (extension, key) DO UPDATE SET "
                    "value = excluded.value, modified = excluded.modified",
                    (extension, key, data, now),
                )

        off_the_loop(self.writer, "write extension state", write)

    def state_delete(self, extension: str, key: str) -> bool:
        """Remove ``key``; whether it was there (always True on a loop's thread: the writer
        removes it later, see :func:`off_the_loop`)."""
        done = off_the_loop(
            self.writer, "delete extension state", lambda: self._state_delete(extension, key)
        )
        return True if done is None else done

    def _state_delete(self, extension: str, key: str) -> bool:
        with self._db.write("delete extension state") as conn:
            cursor = conn.execute(
                "DELETE FROM extension_state WHERE extension = ? AND key = ?", (extension, key)
            )
        return cursor.rowcount > 0

    def state_keys(self, extension: str) -> list[str]:
        with self._db.read("read extension state") as conn:
            rows = conn.execute(
                "SELECT key FROM extension_state WHERE extension = ? ORDER BY key", (extension,)
            ).fetchall()
        return [row[0] for row in rows]

    def state_items(self, extension: str) -> dict[str, Any]:
        with self._db.read("read extension state") as conn:
            rows = conn.execute(
                "SELECT key, value FROM extension_state WHERE extension = ? ORDER BY key",
                (extension,),
            ).fetchall()
        return {key: json.loads(value) for key, value in rows}

    def state_clear(self, extension: str) -> int:
        with self._db.write("clear extension state") as conn:
            cursor = conn.execute("DELETE FROM extension_state WHERE extension = ?", (extension,))
        return cursor.rowcount

    # -- settings overrides (group and session scopes) -----------------------------------

    def set_override(
        self, scope: OverrideScope | str, owner: str, setting: str, value: Any
    ) -> None:
        """Committed by the writer (see :func:`off_the_loop`)."""
        scope = OverrideScope(scope)
        data = to_json(value, f"the {scope.value} override of {setting!r}")
        row = (scope.value, owner, setting, data, time.time())

        def write() -> None:
            with self._db.write("write a settings override") as conn:
                conn.execute(
                    "INSERT INTO setting_overrides (scope, owner, setting, value, modified) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, owner, setting) DO UPDATE SET "
                    "value = excluded.value, modified = excluded.modified",
                    row,
                )

        off_the_loop(self.writer, "write a settings override", write)

    def delete_override(self, scope: OverrideScope | str, owner: str, setting: str) -> bool:
        """Whether it was there (always True on a loop's thread, see :func:`off_the_loop`)."""
        key = (OverrideScope(scope).value, owner, setting)

        def write() -> bool:
            with self._db.write("delete a settings override") as conn:
                cursor = conn.execute(
                    "DELETE FROM setting_overrides WHERE scope = ? AND owner = ? AND setting = ?",
                    key,
                )
            return cursor.rowcount > 0

        done = off_the_loop(self.writer, "delete a settings override", write)
        return True if done is None else done

    def copy_session_overrides(self, source_id: str, target_id: str) -> None:
        """Give session ``target_id`` the session overrides of ``source_id`` in place of its
        own, in one commit: no reader sees half of them (the jail on, its folders not yet).
        Committed by the writer (see :func:`off_the_loop`)."""
        session = OverrideScope.SESSION.value

        def write() -> None:
            with self._db.write("copy a session's settings") as conn:
                conn.execute(
                    "DELETE FROM setting_overrides WHERE scope = ? AND owner = ?",
                    (session, target_id),
                )
                conn.execute(
                    "INSERT INTO setting_overrides (scope, owner, setting, value, modified) "
                    "SELECT scope, ?, setting, value, ? FROM setting_overrides "
                    "WHERE scope = ? AND owner = ?",
                    (target_id, time.time(), session, source_id),
                )

        off_the_loop(self.writer, "copy a session's settings", write)

    def list_overrides(self, scope: OverrideScope | str, owner: str) -> dict[str, Any]:
        """Every override of one group or session, as ``{setting id: value}``."""
        scope = OverrideScope(scope)
        with self._db.read("read settings overrides") as conn:
            rows = conn.execute(
                "SELECT setting, value FROM setting_overrides WHERE scope = ? AND owner = ? "
                "ORDER BY setting",
                (scope.value, owner),
            ).fetchall()
        return {setting: json.loads(value) for setting, value in rows}

    # -- sandbox snapshots ---------------------------------------------------------------

    def save_sandbox_snapshot(self, session_id: str, data: dict[str, Any]) -> None:
        """Replace the session's sandbox snapshot (helpers and variables) with ``data``."""
        blob = to_json(data, f"the sandbox snapshot of session {session_id}")
        with self._db.write("save a sandbox snapshot") as conn:
            conn.execute(
                "INSERT INTO sandbox_snapshots (session_id, data, saved) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET data = excluded.data, "
                "saved = excluded.saved",
                (session_id, blob, time.time()),
            )

    def load_sandbox_snapshot(self, session_id: str) -> dict[str, Any] | None:
        with self._db.read("read a sandbox snapshot") as conn:
            row = conn.execute(
                "SELECT data FROM sandbox_snapshots WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else json.loads(row[0])
