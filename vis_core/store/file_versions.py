"""The file_versions table: the version numbers a session issued for each file it read."""

from __future__ import annotations

from vis_core.store.database import Database
from vis_core.store.writer import StoreWriter, off_the_loop
from vis_core.text_limits import printable


class FileVersionsMixin:
    """Read and add the numbers and digests of the versions a session's tools showed. A path
    whose bytes are not UTF-8 is kept as its printable text (``data\\xff.csv``, as ``ls``
    shows it): SQLite takes UTF-8 only, and ``cat`` of such a file failed on its row."""

    _db: Database
    writer: StoreWriter

    def file_versions(self, session_id: str, path: str) -> list[tuple[int, str]]:
        """The numbers and digests issued for ``path`` in ``session_id``, oldest first."""
        with self._db.read("read file versions") as conn:
            rows = conn.execute(
                "SELECT number, digest FROM file_versions WHERE session_id = ? AND path = ? "
                "ORDER BY number",
                (session_id, printable(path)),
            ).fetchall()
        return [(number, digest) for number, digest in rows]

    def record_file_version(
        self, session_id: str, path: str, number: int, digest: str, keep: int
    ) -> None:
        """Add version ``number`` of ``path``; those ``keep`` or more before it are dropped,
        as the session no longer knows them (committed by the writer, see
        :func:`off_the_loop`)."""

        shown = printable(path)

        def write() -> None:
            with self._db.write("record a file version") as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO file_versions (session_id, path, number, digest) "
                    "VALUES (?, ?, ?, ?)",
                    (session_id, shown, number, digest),
                )
                conn.execute(
                    "DELETE FROM file_versions WHERE session_id = ? AND path = ? AND number <= ?",
                    (session_id, shown, number - keep),
                )

        off_the_loop(self.writer, "record a file version", write)

    def copy_file_versions(self, source_id: str, target_id: str) -> None:
        """Give a fork of ``source_id`` its versions: the transcript it copies names them, so
        the fork numbers on from them (committed by the writer, see :func:`off_the_loop`)."""

        def write() -> None:
            with self._db.write("copy a session's file versions") as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO file_versions (session_id, path, number, digest) "
                    "SELECT ?, path, number, digest FROM file_versions WHERE session_id = ?",
                    (target_id, source_id),
                )

        off_the_loop(self.writer, "copy a session's file versions", write)


class SessionFileVersions:
    """One session's rows of the file_versions table, as ``FileVersions`` keeps its log."""

    def __init__(self, store: FileVersionsMixin, session_id: str) -> None:
        self._store = store
        self._session_id = session_id

    def versions(self, realpath: str) -> list[tuple[int, str]]:
        return self._store.file_versions(self._session_id, realpath)

    def record(self, realpath: str, number: int, digest: str, keep: int) -> None:
        self._store.record_file_version(self._session_id, realpath, number, digest, keep)
