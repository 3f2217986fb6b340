"""The ``.git`` entries in a workspace's subfolders, looked for breadth first in a bounded
number of folders; a folder's listing is reused while its state says it has not changed."""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from pathlib import Path

from vis_core.system.jail import vis_folders

MAX_GIT_FOLDERS = 2_000  # folders looked in for a .git, the shallowest first
SETTLED_NS = 2_000_000_000  # a folder changed this recently is listed again next time
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Parts = tuple[str, ...]
State = tuple[int, int, int, int, int]  # device, inode, mtime, ctime, links


class NestedGits:
    """The ``.git`` entries below ``root`` (not its own): :meth:`new` says which appeared
    since the last look. A folder holding a ``.git`` is a repository of its own and is not
    entered (a nested clone's files are not walked), nor are Vis's own folders (its drafts).
    A look lists at most ``limit`` folders; one whose device, inode, times and link count
    are as when it was last listed (and settled then) is not listed again, so a look at an
    unchanged tree costs one ``lstat`` per folder. Nothing is listed until the first look."""

    def __init__(self, root: Path, limit: int = MAX_GIT_FOLDERS) -> None:
        self.root = root
        self.limit = limit
        self._base = str(root).rstrip("/") or "/"
        real = Path(os.path.realpath(root))
        own = (Path(os.path.realpath(folder)) for folder in vis_folders())
        self._own = {
            folder.relative_to(real).parts
            for folder in own
            if folder != real and folder.is_relative_to(real)
        }
        self._listed: dict[Parts, tuple[State, frozenset[str]]] = {}
        self._started = time.time_ns()
        self.known: set[Path] | None = None  # none looked for yet: nothing listed at start

    def new(self) -> list[Path]:
        """The ``.git`` entries that appeared since the last call, each once; at the first
        call, those changed since this was made (a nested clone that was there is not)."""
        found = self.look()
        if self.known is None:
            self.known = {path for path in found if not self._changed_since_start(path)}
        fresh = found - self.known
        self.known |= fresh
        return sorted(fresh)

    def _changed_since_start(self, path: Path) -> bool:
        try:
            return os.lstat(path).st_ctime_ns >= self._started
        except OSError:
            return False

    def look(self) -> set[Path]:
        """The ``.git`` entries in the subfolders of the root now."""
        found: set[Path] = set()
        listed: dict[Parts, tuple[State, frozenset[str]]] = {}
        settled = time.time_ns() - SETTLED_NS
        queue: deque[Parts] = deque([()])
        looked = 0
        while queue and looked < self.limit:
            parts = queue.popleft()
            looked += 1
            if parts in self._own:
                continue
            names = self._names(parts, settled, listed)
            if names is None:
                continue  # gone, unreadable, or a link now
            if parts and ".git" in names:
                found.add(self.root.joinpath(*parts, ".git"))
                continue
            room = max(self.limit - looked - len(queue), 0)
            queue.extend((*parts, name) for name in sorted(names - {".git"})[:room])
        self._listed = listed
        return found

    def _names(
        self, parts: Parts, settled: int, listed: dict[Parts, tuple[State, frozenset[str]]]
    ) -> frozenset[str] | None:
        """The folders in ``parts`` (and a ``.git`` there, of any type): as listed last time
        when the folder's state is the same, else listed now."""
        try:
            st = os.lstat("/".join((self._base, *parts)))
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        state = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)
        kept = self._listed.get(parts)
        if kept is not None and kept[0] == state:
            listed[parts] = kept
            return kept[1]
        try:
            names = _folders(self.root, parts)
        except OSError:
            return None
        if max(st.st_mtime_ns, st.st_ctime_ns) < settled:
            listed[parts] = (state, names)
        return names


def _folders(root: Path, parts: Parts) -> frozenset[str]:
    """The names of the folders in ``root/parts`` and of a ``.git`` there, each folder on the
    way opened in the one before without following a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            inner = os.open(part, _FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
        with os.scandir(fd) as listing:
            return frozenset(
                e.name for e in listing if e.name == ".git" or e.is_dir(follow_symlinks=False)
            )
    finally:
        os.close(fd)
