"""What ``/undo`` put back: the files and links of the turns it undid, by relative path."""

from __future__ import annotations

import os
from dataclasses import dataclass

# why /undo cannot put a file back: its checkpoint listed it but kept no copy
NOT_KEPT = "no copy was kept: too large, or past what one checkpoint copies"
# why /undo leaves a file the turn changed: it changed again after the turn
CHANGED_SINCE = "it changed again after the turn (your edit is kept)"


class FolderTooBig(OSError):
    """The workspace holds more files than Vis lists before and after each block: while it
    does, no checkpoint and no list of the files a block changed there."""


class NotListed(OSError):
    """Git could not list the workspace's files (a ``.gitignore`` that is a named pipe, a
    repository it refuses; the message says which): like a file that cannot be read, no
    checkpoint and no list of the files a block changed until it can, and the turn goes on."""


@dataclass(frozen=True)
class Listed:
    """One listing of the workspace: each file's (size, mtime_ns, mode, ctime_ns, inode) and
    each link's target, by workspace-relative path."""

    files: dict[str, tuple[int, ...]]
    links: dict[str, str]


@dataclass(frozen=True)
class Scan:
    """One scan of the workspace as a checkpoint records it: each regular file's ``lstat``
    and each link's target, by workspace-relative path, and the nested repositories it
    listed (relative folders)."""

    files: dict[str, os.stat_result]
    links: dict[str, str]
    repos: list[str]


@dataclass(frozen=True)
class UndoReport:
    """What ``restore`` did, by workspace-relative path (a link counts as a file does)."""

    turns: tuple[int, ...]  # positions of the turns undone, newest first
    restored: tuple[str, ...] = ()  # changed or deleted by the turns: put back
    removed: tuple[str, ...] = ()  # created by the turns: deleted
    not_kept: tuple[str, ...] = ()  # changed, but the checkpoint kept no copy of them
    kept: tuple[str, ...] = ()  # changed by the turns, then again since (yours): left as they are
    links: tuple[
        str, ...
    ] = ()  # of restored and removed, those that are links (put back, or removed)

    @property
    def changed(self) -> bool:
        return bool(self.restored or self.removed)
