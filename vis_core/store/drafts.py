"""The drafts table: which drafts exist, where, and which session works in each."""

from __future__ import annotations

from vis_core.model.draft import Draft, DraftBackend
from vis_core.store.database import Database

_COLUMNS = (
    "id, label, backend, root, workspace, repo_root, base, branch, target_branch, session_id, "
    "created"
)


def _draft(row: tuple) -> Draft:
    return Draft(row[0], row[1], DraftBackend(row[2]), *row[3:])


class DraftsMixin:
    """Save, find and forget drafts; a row stays until the draft is approved or discarded."""

    _db: Database

    def save_draft(self, draft: Draft) -> None:
        with self._db.write("save a draft") as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO drafts ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    draft.id,
                    draft.label,
                    str(draft.backend),
                    draft.root,
                    draft.workspace,
                    draft.repo_root,
                    draft.base,
                    draft.branch,
                    draft.target_branch,
                    draft.session_id,
                    draft.created,
                ),
            )

    def forget_draft(self, draft_id: str) -> bool:
        with self._db.write("forget a draft") as conn:
            cursor = conn.execute("DELETE FROM drafts WHERE id = ?", (draft_id,))
        return cursor.rowcount > 0

    def drafts(self, workspace: str | None = None) -> list[Draft]:
        """Every draft (of ``workspace`` when given), oldest first."""
        with self._db.read("list drafts") as conn:
            if workspace is None:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM drafts ORDER BY created").fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM drafts WHERE workspace = ? ORDER BY created",
                    (workspace,),
                ).fetchall()
        return [_draft(row) for row in rows]

    def draft_of_session(self, session_id: str) -> Draft | None:
        """The draft ``session_id`` works in, if any (a session is in at most one)."""
        with self._db.read("find a session's draft") as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM drafts WHERE session_id = ? ORDER BY created DESC",
                (session_id,),
            ).fetchone()
        return None if row is None else _draft(row)
