"""The git repositories in a workspace's folders (a ``.git``, or a folder git takes as a bare
repository), and the entries of other names asked for (other agents' settings), looked for in
every folder known, those that changed first, within bounds; a folder's listing is reused
while its state says it has not changed."""

from __future__ import annotations

import heapq
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vis_core.paths import vis_folders
from vis_core.system.git_dirs import SHAPE, may_be_shaped, open_beneath, shape_at

MAX_GIT_FOLDERS = 2_000  # folders listed per look: those that changed (or are new) first
MAX_KNOWN_FOLDERS = 50_000  # folders kept and looked at (one lstat each) per look
SETTLED_NS = 2_000_000_000  # a folder changed this recently is listed again next time
COARSE_NS = 10_000_000  # a file's times lag the clock by up to a kernel tick (HZ=100)

Parts = tuple[str, ...]
State = tuple[int, int, int, int, int]  # device, inode, mtime, ctime, links
_MARKS = frozenset(name.casefold() for name in (".git", *SHAPE))  # kept besides folders
_GIT_STORE = frozenset({".git", "objects", "refs"})  # a bare repository's: never entered


@dataclass(slots=True)
class _Folder:
    """A folder known: its path, its listing (folders; ``.git``, :data:`SHAPE` and named
    entries), the state it had when listed (None: list it again), whether it is entered
    (not a repository of its own) and the look since which it waits to be listed (None: it
    does not)."""

    path: str
    parent: _Folder | None = None
    state: State | None = None
    folders: frozenset[str] = frozenset()
    marks: frozenset[str] = frozenset()
    entered: bool = True
    gone: bool = False
    due: int | None = None


class NestedGits:
    """The git repositories in ``root``'s folders (its own ``.git`` aside), and the entries
    named one of ``names`` in them (the root's too): :meth:`new` says which appeared since
    this was made. A folder holding a ``.git``, or a bare repository, is
    a repository of its own and is not entered (a nested clone's files are not walked), nor
    are Vis's own folders (its drafts). Each look takes every folder known (at most
    ``known``) at one ``lstat``, and lists at most ``limit`` of them: those changed since
    they were listed, or new, the one waiting longest first, then the shallowest. So folders
    made earlier, however many, do not hold back one that a later block changes, and one
    left waiting is listed before those changed after it. ``enter``: a folder holding a
    ``.git`` is entered too (the jail's and the workspace's looks: a submodule of a nested
    clone is a repository the person's git runs in as well), and so is a bare repository,
    but for its ``objects/`` and ``refs/`` (a folder in one holds other agents' settings as
    any other; the jail keeps the whole of it read-only)."""

    def __init__(
        self,
        root: Path,
        limit: int = MAX_GIT_FOLDERS,
        known: int = MAX_KNOWN_FOLDERS,
        *,
        enter: bool = False,
        names: Iterable[str] = (),
    ) -> None:
        self.root = root
        self.names = frozenset(names)
        self._marks = _MARKS | {name.casefold() for name in self.names}
        self.limit = limit
        self.known_limit = known
        self.enter = enter
        self._base = str(root).rstrip("/") or "/"
        real = Path(os.path.realpath(root))
        own = (Path(os.path.realpath(folder)) for folder in vis_folders())
        self._own = {
            folder.relative_to(real).parts
            for folder in own
            if folder != real and folder.is_relative_to(real)
        }
        self._known: dict[Parts, _Folder] = {(): _Folder(self._base)}
        self._looks = 0
        self._started = time.time_ns() - COARSE_NS  # what changed since is the session's
        self.told: set[Path] | None = None  # none looked for yet: nothing listed at start
        self.waiting = 0  # folders the last look left to list (past ``limit``), about
        self.full = False  # a folder made during the session was left out (past ``known``)

    @property
    def looked_in(self) -> int:
        """How many folders each look takes (the folders known)."""
        return len(self._known)

    def new(self) -> list[Path]:
        """The repositories and named entries that appeared since this was made, each once: a
        ``.git`` entry, the folder that is a bare repository, an entry of ``names``. One found
        at the first look is said only when it changed since this was made (a nested clone
        that was there is not), and one found later (past the bounds before) only when it
        changed since then too."""
        found = self.look() | self.named()
        if self.told is None:
            self.told = {path for path in found if not self._changed_since_start(path)}
        fresh = {path for path in found - self.told if self._changed_since_start(path)}
        self.told |= fresh
        return sorted(fresh)

    def _changed_since_start(self, path: Path) -> bool:
        """Whether the ``.git`` or named entry, or an entry of a bare repository's shape (not
        its folder: Vis's own ``.vis/`` changes that), changed since this was made."""
        whole = path.name == ".git" or path.name in self.names
        for name in (path,) if whole else (path / name for name in SHAPE):
            try:
                if os.lstat(name).st_ctime_ns >= self._started:
                    return True
            except OSError:
                continue
        return False

    def look(self) -> set[Path]:
        """The repositories in the root's folders now: ``.git`` entries, and the folders
        that are bare repositories (the root's own ``.git`` is not one)."""
        self._looks += 1
        waiting: list[tuple[int, int, Parts]] = []
        for parts, folder in list(self._known.items()):  # a folder before those inside it
            parent = folder.parent
            if parent is not None and (parent.gone or not parent.entered):
                self._forget(parts)  # in a folder gone, or now a repository
                continue
            try:
                st = os.lstat(folder.path)
            except OSError:
                self._forget(parts)  # gone, or a folder on the way is
                continue
            if not stat.S_ISDIR(st.st_mode):
                self._forget(parts)
                continue
            state = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)
            if folder.state != state:
                folder.state = None
                folder.due = folder.due or self._looks
                waiting.append((folder.due, len(parts), parts))
        heapq.heapify(waiting)
        settled = time.time_ns() - SETTLED_NS
        listed = 0
        while waiting and listed < self.limit:
            _, _, parts = heapq.heappop(waiting)
            folder = self._known.get(parts)
            if folder is None:
                continue
            listed += 1
            changed = self._list(parts, folder, settled)
            if changed is None:
                self._forget(parts)
                continue
            bare = bool(parts) and self._bare_in(parts, folder)
            folder.entered = not parts or self.enter or not (".git" in folder.marks or bare)
            if not folder.entered:
                continue  # a repository of its own
            for name in sorted(folder.folders - (_GIT_STORE if bare else {".git"})):
                inner = (*parts, name)
                if inner in self._known or inner in self._own:
                    continue
                if len(self._known) >= self.known_limit:
                    self.full = self.full or changed >= self._started
                    break
                self._known[inner] = _Folder(f"{folder.path}/{name}", folder, due=self._looks)
                heapq.heappush(waiting, (self._looks, len(inner), inner))
        self.waiting = len(waiting)
        return self._found()

    def _forget(self, parts: Parts) -> None:
        self._known.pop(parts).gone = True

    def _list(self, parts: Parts, folder: _Folder, settled: int) -> int | None:
        """List ``folder`` now, its listing kept with its state when it had settled; its
        ctime (None: it is gone, unreadable or a link now)."""
        fd = open_beneath(self.root, parts)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)
            with os.scandir(fd) as listing:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in listing]
        except OSError:
            return None
        finally:
            os.close(fd)
        folder.folders = frozenset(name for name, is_dir in entries if is_dir)
        folder.marks = frozenset(name for name, _ in entries if name.casefold() in self._marks)
        folder.due = None
        state = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)
        folder.state = state if max(st.st_mtime_ns, st.st_ctime_ns) < settled else None
        return st.st_ctime_ns

    def _found(self) -> set[Path]:
        found: set[Path] = set()
        for parts, folder in self._known.items():
            if not folder.marks:
                continue
            if parts and ".git" in folder.marks:
                found.add(self.root.joinpath(*parts, ".git"))
            elif ".git" not in folder.marks and self._bare_in(parts, folder):
                found.add(self.root.joinpath(*parts))
        return found

    def named(self) -> set[Path]:
        """The entries named one of ``names`` in the folders the last look knew, the root's
        too (listed by that look: no folder is listed again)."""
        return {
            self.root.joinpath(*parts, name)
            for parts, folder in self._known.items()
            for name in folder.marks & self.names
        }

    def _bare_in(self, parts: Parts, folder: _Folder) -> bool:
        """Whether ``folder`` (at ``parts``) is a bare repository now: its listing may be one,
        and its HEAD is read again (a rewrite in place leaves the folder's state as it was)."""
        return may_be_shaped(folder.marks) and shape_at(self.root, parts).bare
