"""The journal of the temporary files Vis writes beside a file it replaces whole, so that a
start removes those an interrupted write left, and only those.

Each temporary file (``.NAME.*.vis-tmp``, and the ``.vis-undo`` and ``.vis-replay`` ones) is
named in an entry before it is made: a small file in the ``temps`` folder of Vis's data
folder holding its real path, removed once the temporary file was renamed over its target
or removed. A write cut short (Vis killed, the machine down) leaves its entry, so the next
start removes that file, wherever it lies, and looks at no folder of the workspace: the walk
it replaced took seconds of CPU at every start in a home folder or a monorepo. A journal is
sound here because Vis makes these files itself and names each before it exists: no crash
leaves one it does not name, and an entry left without its file is dropped. A file of the
same name Vis did not write (or an older Vis did, before the journal) is left alone. A file
younger than :data:`STALE_AFTER` may be another Vis writing it now, and waits.

The removal reaches each file's folder from ``/`` one component at a time, never through a
link, and looks at the file and removes it through that folder's descriptor: a folder
swapped for a link since the write cannot send it elsewhere.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vis_core.paths import PRIVATE_FILE_MODE, VisPaths, private_dir

log = logging.getLogger(__name__)

STALE_AFTER = 60.0  # seconds: a younger temporary file may be another Vis writing right now
MAX_ENTRY = 8192  # bytes of an entry read at most (a path)
TEMP_NAME = re.compile(r"\..+\.vis-[a-z]+", re.DOTALL)  # the names Vis gives them
_WALK = getattr(os, "O_PATH", 0) or os.O_RDONLY
_FOLDER = os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@contextmanager
def journaled(path: str) -> Iterator[None]:
    """Name the temporary file ``path`` (absolute, its folder's links resolved) in the
    journal while the block makes, writes and renames or removes it. An entry that cannot
    be written is logged and the write goes on: it only loses the cleanup after a crash."""
    entry = _record(path)
    try:
        yield
    finally:
        if entry is not None:
            entry.unlink(missing_ok=True)


def _record(path: str) -> Path | None:
    folder = VisPaths.from_env().temps_journal_dir
    entry = folder / os.urandom(8).hex()
    try:
        private_dir(folder)
        fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
        try:
            os.write(fd, os.fsencode(path))
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("the temporary file %s is not in the journal (%s)", path, exc)
        return None
    return entry


def remove_stale_temps(paths: VisPaths) -> list[Path]:
    """Delete the temporary files the journal of ``paths`` names whose write was cut short
    (older than :data:`STALE_AFTER`), and drop their entries; the files removed."""
    folder = paths.temps_journal_dir
    try:
        names = os.listdir(folder)
    except OSError:
        return []  # no journal yet: no temporary file was ever left
    removed: list[Path] = []
    limit = time.time() - STALE_AFTER
    for name in names:
        entry = folder / name
        try:
            with open(entry, "rb") as stream:
                path = os.fsdecode(stream.read(MAX_ENTRY))
            if os.lstat(entry).st_mtime >= limit:
                continue  # its write may be under way
        except OSError:
            continue  # removed meanwhile
        done = _remove(path, limit)
        if done is not None:
            entry.unlink(missing_ok=True)
            removed += [Path(path)] if done else []
    return removed


def _remove(path: str, limit: float) -> bool | None:
    """Remove the temporary file ``path`` if it is stale: True when removed, False when it
    is gone or not one to remove (its entry goes), None when it is still being written."""
    folder, name = os.path.split(path)
    odd = not os.path.isabs(path) or "\0" in path or ".." in Path(folder).parts
    if odd or not TEMP_NAME.fullmatch(name):
        return False
    try:
        fd = _open_folder(folder)
    except OSError:
        return False  # gone, or a link on the way: not followed
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return False
        if st.st_mtime >= limit:
            return None
        os.unlink(name, dir_fd=fd)
        return True
    except OSError:
        return False  # gone already, or not ours to remove
    finally:
        os.close(fd)


def _open_folder(folder: str) -> int:
    """The folder ``folder`` (absolute), opened from ``/`` one component at a time, none of
    them a link."""
    fd = os.open("/", _WALK | _FOLDER)
    for part in Path(folder).parts[1:]:
        try:
            inner = os.open(part, _WALK | _FOLDER, dir_fd=fd)
        finally:
            os.close(fd)
        fd = inner
    return fd
