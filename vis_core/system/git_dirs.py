"""Whether git takes a folder as a repository: it holds a ``.git``, or it is shaped as git's
``is_git_directory`` (setup.c) checks, which is how git finds a bare repository where it runs
(``safe.bareRepository`` is ``all`` by default): a ``HEAD`` naming a ref or an object, and
``objects`` and ``refs`` (or a ``commondir`` file, which names the folder that has them)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SHAPE = ("HEAD", "objects", "refs", "commondir")  # the entries git looks at
HEAD_READ = 255  # bytes of HEAD git reads (validate_headref)
_SPACE = b" \t\n\r\v\f"
_OBJECT_ID = re.compile(rb"[0-9a-fA-F]{40}")  # SHA-1; a SHA-256 id starts with 40 of them
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Shape:
    """What of git's repository shape one folder holds: which of :data:`SHAPE` are there
    (of any type) and whether its ``HEAD`` names a ref or an object."""

    entries: frozenset[str] = frozenset()
    head: bool = False

    @property
    def bare(self) -> bool:
        """Whether git takes the folder as a repository of its own (a bare one)."""
        return self.head and ("commondir" in self.entries or {"objects", "refs"} <= self.entries)

    def __or__(self, other: Shape) -> Shape:
        """The shape of a folder holding the entries of both (what approval leaves)."""
        return Shape(self.entries | other.entries, self.head or other.head)


def may_be_shaped(names: Iterable[str]) -> bool:
    """Whether a folder listing ``names`` may be a bare repository (a cheap first test,
    case-insensitive as a case-folding filesystem is): :func:`shape_in` says for sure."""
    folded = {name.casefold() for name in names}
    return "head" in folded and ("commondir" in folded or {"objects", "refs"} <= folded)


def head_names_a_ref(data: bytes) -> bool:
    """Whether ``data``, HEAD's first bytes, is what git's ``validate_headref`` accepts:
    ``ref:`` and a name under ``refs/``, or an object id."""
    data = data[:HEAD_READ]
    if data.startswith(b"ref:") and data[4:].lstrip(_SPACE).startswith(b"refs/"):
        return True
    return _OBJECT_ID.match(data) is not None


def shape_in(folder: int) -> Shape:
    """The shape of the open folder ``folder``: each entry looked at without following a
    link, HEAD read only when it is a file (a link counts when it leads into ``refs/``, as
    for git)."""
    entries = set()
    for name in SHAPE:
        try:
            os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            continue
        entries.add(name)
    return Shape(frozenset(entries), "HEAD" in entries and _head_ok(folder))


def _head_ok(folder: int) -> bool:
    try:
        st = os.stat("HEAD", dir_fd=folder, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            return os.readlink("HEAD", dir_fd=folder).startswith("refs/")
        if not stat.S_ISREG(st.st_mode):
            return False  # a pipe or a device is never opened
        fd = os.open(
            "HEAD", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder
        )
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and head_names_a_ref(os.read(fd, HEAD_READ))
    except OSError:
        return False
    finally:
        os.close(fd)


def open_beneath(root: Path | str, parts: Iterable[str]) -> int | None:
    """A descriptor of folder ``root/parts``, each folder on the way opened in the one before
    without following a link; None when one is missing, not a folder, or a link."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        for part in parts:
            inner = os.open(part, _FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        os.close(fd)
        return None
    return fd


def shape_at(root: Path | str, parts: Iterable[str] = ()) -> Shape:
    """The shape of folder ``root/parts`` (reached as :func:`open_beneath` does; an empty
    one when it cannot be)."""
    fd = open_beneath(root, parts)
    if fd is None:
        return Shape()
    try:
        return shape_in(fd)
    finally:
        os.close(fd)


def is_repository(folder: Path | str) -> bool:
    """Whether git takes ``folder`` as a repository: it holds a ``.git`` (of any type), or
    it is a bare one (:class:`Shape`)."""
    return os.path.lexists(os.path.join(folder, ".git")) or shape_at(folder).bare
