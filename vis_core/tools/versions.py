"""What the model saw: numbered versions of each file per session (the per-file write queue is
``vis_core.file_queue``)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

DEFAULT_KEEP = 32


@dataclass(frozen=True)
class FileVersion:
    """One observed content of a file: its number, text and SHA-256."""

    number: int
    text: str
    digest: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class FileVersions:
    """Versions per real path for one session; a new number whenever the content changed.

    The newest ``keep`` versions of each file are kept in memory for the session's lifetime,
    so a ``patch`` against any of them can be rebased onto the file as it is now.
    """

    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        if keep < 1:
            raise ValueError("FileVersions keep must be at least 1")
        self._keep = keep
        self._files: dict[str, OrderedDict[int, FileVersion]] = {}
        self._next: dict[str, int] = {}
        self._lock = threading.Lock()

    def observe(self, realpath: str, text: str) -> int:
        """The version number of ``text`` as the file's current content (new if it changed)."""
        digest = _digest(text)
        with self._lock:
            kept = self._files.setdefault(realpath, OrderedDict())
            if kept:
                newest = next(reversed(kept.values()))
                if newest.digest == digest:
                    return newest.number
            number = self._next.get(realpath, 0) + 1
            self._next[realpath] = number
            kept[number] = FileVersion(number, text, digest)
            while len(kept) > self._keep:
                kept.popitem(last=False)
            return number

    def get(self, realpath: str, number: int) -> FileVersion | None:
        with self._lock:
            return self._files.get(realpath, {}).get(number)

    def latest(self, realpath: str) -> FileVersion | None:
        with self._lock:
            kept = self._files.get(realpath)
            return next(reversed(kept.values())) if kept else None

    def known_range(self, realpath: str) -> tuple[int, int] | None:
        """Oldest kept and newest issued version numbers, or ``None`` if never seen."""
        with self._lock:
            kept = self._files.get(realpath)
            if not kept:
                return None
            return next(iter(kept)), self._next[realpath]

    def forget(self, realpath: str) -> None:
        with self._lock:
            self._files.pop(realpath, None)
