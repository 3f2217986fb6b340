"""Attachment metadata: versioned files of a session (the bytes live on disk)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from vis_core.model.attachments import AttachmentKind, Audience
from vis_core.store.database import Database, StoreError
from vis_core.store.rows import ATTACHMENT_COLUMNS, AttachmentRow, attachment_row


class AttachmentsMixin:
    """Add, list and look up attachment versions; the next version is chosen on add."""

    _db: Database

    def add_attachment(
        self,
        session_id: str,
        filename: str,
        media_type: str,
        path: Path | str,
        *,
        size: int = 0,
        kind: AttachmentKind | str = AttachmentKind.FILE,
        audience: Audience | str = Audience.BOTH,
        commentable: bool = False,
        label: str = "",
        iteration_id: str | None = None,
    ) -> AttachmentRow:
        """Record the next version of ``filename`` in the session and return its row."""
        if not filename.strip():
            raise ValueError("an attachment needs a filename")
        audience = Audience(audience)
        attachment_id = uuid.uuid4().hex
        with self._db.write("add an attachment") as conn:
            (version,) = conn.execute(
                "SELECT coalesce(max(version), 0) + 1 FROM attachments "
                "WHERE session_id = ? AND filename = ?",
                (session_id, filename),
            ).fetchone()
            row = conn.execute(
                f"INSERT INTO attachments ({ATTACHMENT_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                f"RETURNING {ATTACHMENT_COLUMNS}",
                (
                    attachment_id,
                    session_id,
                    iteration_id,
                    filename,
                    version,
                    media_type,
                    str(kind),
                    size,
                    str(path),
                    audience.value,
                    int(commentable),
                    label,
                    time.time(),
                ),
            ).fetchone()
        return attachment_row(row)

    def list_attachments(self, session_id: str, filename: str | None = None) -> list[AttachmentRow]:
        """Attachments of a session (every version of ``filename`` when given), oldest first."""
        query = f"SELECT {ATTACHMENT_COLUMNS} FROM attachments WHERE session_id = ?"
        params: tuple[object, ...] = (session_id,)
        if filename is not None:
            query += " AND filename = ?"
            params += (filename,)
        with self._db.read("list attachments") as conn:
            rows = conn.execute(query + " ORDER BY created, filename, version", params).fetchall()
        return [attachment_row(row) for row in rows]

    def get_attachment(
        self, session_id: str, target: str, version: int | None = None
    ) -> AttachmentRow | None:
        """An attachment by id, or by filename: the latest, ``version``, or counted back if < 0."""
        with self._db.read("read an attachment") as conn:
            row = conn.execute(
                f"SELECT {ATTACHMENT_COLUMNS} FROM attachments WHERE session_id = ? AND id = ?",
                (session_id, target),
            ).fetchone()
            if row is not None:
                return attachment_row(row)
            rows = conn.execute(
                f"SELECT {ATTACHMENT_COLUMNS} FROM attachments WHERE session_id = ? "
                "AND filename = ? ORDER BY version",
                (session_id, target),
            ).fetchall()
        if not rows:
            return None
        if version is None:
            return attachment_row(rows[-1])
        if version < 0:
            if -version > len(rows):
                raise StoreError(
                    f"{target!r} has {len(rows)} versions; version {version} counts back too far"
                )
            return attachment_row(rows[version])
        for candidate in rows:
            if candidate[4] == version:
                return attachment_row(candidate)
        return None
