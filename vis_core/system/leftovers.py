"""Temporary folders a Vis process keeps for its life, and the sweep of those a killed one left.

A folder made by :func:`owned_folder` holds a lock file its process keeps locked (``flock``)
until it releases the folder or ends, however it ends: the kernel drops the lock with the
process. A Vis killed with SIGKILL (or by the OOM killer) leaves its folders in the temporary
folder; :func:`sweep` removes this user's folders of that kind whose lock is free. A folder
still being made has no lock file yet (it is renamed in once locked), and one of an older Vis
has none at all: both are left alone, as is anything not a plain folder of this user.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

LOCK_NAME = ".vis-owner"
PREFIXES = ("vis-net-", "vis-hold-")  # what :func:`sweep` looks at

_held: dict[str, int] = {}  # folder -> its locked file's descriptor
_gate = threading.Lock()


def owned_folder(prefix: str) -> Path:
    """A new 0700 folder ``<tmp>/<prefix>XXXXXXXX``, locked as this process's until
    :func:`release` (or the process's end)."""
    assert prefix in PREFIXES, prefix
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    making = folder / (LOCK_NAME + ".new")
    fd = os.open(making, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(making, folder / LOCK_NAME)  # seen by a sweep only once locked
    with _gate:
        _held[str(folder)] = fd
    return folder


def release(folder: Path) -> None:
    """Remove ``folder`` (made by :func:`owned_folder`) and drop its lock."""
    shutil.rmtree(folder, ignore_errors=True)
    with _gate:
        fd = _held.pop(str(folder), None)
    if fd is not None:
        os.close(fd)


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the folders under ``root`` (the temporary folder) that :func:`owned_folder` made
    for a process of this user that is gone; the folders removed."""
    top = Path(root or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(top))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith(PREFIXES) and _abandoned(entry):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _abandoned(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is this user's own folder (not a link) with a lock file no process
    holds."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    try:
        fd = os.open(
            os.path.join(entry.path, LOCK_NAME), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        )
    except OSError:  # being made, or of an older Vis
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # its process holds it
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return True
