"""What the model saw: numbered versions of each file per session (the per-file write queue is
``vis_core.file_queue``)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Protocol

DEFAULT_KEEP = 32  # versions of one file a patch may name (their numbers and digests)
DEFAULT_BUDGET = 64 << 20  # characters of text kept across all files to rebase patches onto


@dataclass(frozen=True)
class FileVersion:
    """One observed content of a file: its number, SHA-256 and, while kept, its text
    (``None``: dropped to stay within the budget, or seen by an earlier process)."""

    number: int
    digest: str
    text: str | None = None

    def matches(self, text: str) -> bool:
        """Whether ``text`` is this version's content."""
        return digest(text) == self.digest


def digest(text: str) -> str:
    """The SHA-256 a version is known by."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class VersionLog(Protocol):
    """Where a session's version numbers outlive its process (the store's ``file_versions``):
    a resumed session numbers on, so no number names two contents."""

    def versions(self, realpath: str) -> list[tuple[int, str]]:
        """The numbers and digests issued for ``realpath``, oldest first."""
        ...

    def record(self, realpath: str, number: int, digest: str, keep: int) -> None:
        """``number`` was issued for ``realpath``; those ``keep`` or more before it are
        forgotten."""
        ...


class FileVersions:
    """Versions per real path for one session; a new number whenever the content changed.

    The number and digest of the newest ``keep`` versions of each file are known for the
    session's lifetime (across processes, with a ``log``). Their texts, which a ``patch``
    against an older version is rebased from, are kept newest first within ``budget``
    characters across all files; a patch against a version whose text is not kept applies
    only while the file is still that version.
    """

    def __init__(
        self, keep: int = DEFAULT_KEEP, budget: int = DEFAULT_BUDGET, log: VersionLog | None = None
    ) -> None:
        if keep < 1:
            raise ValueError("FileVersions keep must be at least 1")
        self._keep = keep
        self._budget = budget
        self._log = log
        self._files: dict[str, OrderedDict[int, FileVersion]] = {}
        self._next: dict[str, int] = {}
        self._texts: OrderedDict[tuple[str, int], int] = OrderedDict()  # kept, oldest first
        self._kept_chars = 0
        self._lock = threading.Lock()

    def observe(self, realpath: str, text: str) -> int:
        """The version number of ``text`` as the file's current content (new if it changed)."""
        sha = digest(text)
        with self._lock:
            kept = self._known(realpath)
            newest = next(reversed(kept.values()), None)
            if newest is not None and newest.digest == sha:
                if newest.text is None:
                    self._keep_text(realpath, newest.number, text)
                return newest.number
            number = self._next.get(realpath, 0) + 1
            if self._log is not None:
                self._log.record(realpath, number, sha, self._keep)
            self._next[realpath] = number
            kept[number] = FileVersion(number, sha)
            self._keep_text(realpath, number, text)
            while len(kept) > self._keep:
                self._drop_text((realpath, kept.popitem(last=False)[0]))
            return number

    def get(self, realpath: str, number: int) -> FileVersion | None:
        with self._lock:
            return self._known(realpath).get(number)

    def latest(self, realpath: str) -> FileVersion | None:
        with self._lock:
            return next(reversed(self._known(realpath).values()), None)

    def known_range(self, realpath: str) -> tuple[int, int] | None:
        """Oldest known and newest issued version numbers, or ``None`` if never seen."""
        with self._lock:
            kept = self._known(realpath)
            if not kept:
                return None
            return next(iter(kept)), self._next[realpath]

    def kept_chars(self) -> int:
        """Characters of version text held now (at most the budget)."""
        with self._lock:
            return self._kept_chars

    def _known(self, realpath: str) -> OrderedDict[int, FileVersion]:
        """The file's known versions, read from the log the first time it is asked for."""
        kept = self._files.get(realpath)
        if kept is None:
            kept = self._files[realpath] = OrderedDict()
            issued = self._log.versions(realpath) if self._log is not None else []
            for number, sha in issued[-self._keep :]:
                kept[number] = FileVersion(number, sha)
            if issued:
                self._next[realpath] = max(number for number, _ in issued)
        return kept

    def _keep_text(self, realpath: str, number: int, text: str) -> None:
        """Hold ``text`` as version ``number``'s, dropping the oldest held texts past the
        budget (a text larger than the whole budget is not held)."""
        if len(text) > self._budget:
            return
        self._files[realpath][number] = replace(self._files[realpath][number], text=text)
        self._texts[(realpath, number)] = len(text)
        self._kept_chars += len(text)
        while self._kept_chars > self._budget:
            self._drop_text(next(iter(self._texts)))

    def _drop_text(self, key: tuple[str, int]) -> None:
        size = self._texts.pop(key, None)
        if size is None:
            return
        self._kept_chars -= size
        realpath, number = key
        version = self._files[realpath].get(number)
        if version is not None:
            self._files[realpath][number] = replace(version, text=None)
