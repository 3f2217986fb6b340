"""Files beneath a root folder, reached without letting a link (or a swapped folder) lead out.

Every path is resolved from an open descriptor of the root, one component at a time, each
opened with ``O_NOFOLLOW``: ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`` where the
kernel has it, else a walk with ``os.open(..., dir_fd=...)``. A link met on the way is read
here and its text walked again from the root (or its folder): a link that stays inside the
root works as before, one that leads out of it (``..`` past the root, an absolute target
elsewhere) raises :class:`Escape`, as does any link on the way where a caller allows none
(``through_links=False``: making or removing a link). Folders listed as ``hidden`` (Vis's
own, when they lie in the root) are recognised by their inode, so renaming or linking them
does not help either.
The kernel never follows a link here, so a link swapped in after a check cannot redirect a
read or a write.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from vis_core.system.temp_journal import journaled

_O_PATH = getattr(os, "O_PATH", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
# an intermediate folder: only walked through (O_PATH needs no read permission)
_WALK = (_O_PATH or os.O_RDONLY) | _DIRECTORY | _NOFOLLOW | _CLOEXEC
MAX_LINKS = 40  # links followed in one path, as the kernel's own limit

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437}.get(os.uname().machine)


class Escape(PermissionError):
    """A path, or a link on it, that leads out of its root or into a hidden folder (or a
    link on a path that may go through none)."""


class _Openat2:
    """``openat2(2)`` through ``syscall`` (ctypes loads on first use); ``None`` answers mean
    "walk instead"."""

    def __init__(self) -> None:
        self.usable = _SYS_OPENAT2 is not None and sys.platform == "linux"
        self._call: Callable[[int, str, int, int], int] | None = None

    def _load(self) -> Callable[[int, str, int, int], int] | None:
        import ctypes

        class OpenHow(ctypes.Structure):
            _fields_ = (
                ("flags", ctypes.c_uint64),
                ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64),
            )

        try:
            syscall = ctypes.CDLL(None, use_errno=True).syscall
        except (OSError, AttributeError):
            return None
        syscall.restype = ctypes.c_long
        resolve = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS

        def call(dirfd: int, path: str, flags: int, mode: int) -> int:
            how = OpenHow(flags, mode, resolve)
            fd = syscall(
                ctypes.c_long(_SYS_OPENAT2 or 0),
                ctypes.c_int(dirfd),
                ctypes.c_char_p(os.fsencode(path)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
            return int(fd) if fd >= 0 else -ctypes.get_errno()

        return call

    def __call__(self, dirfd: int, path: str, flags: int, mode: int) -> int | None:
        if not self.usable:
            return None
        if self._call is None:
            self._call = self._load()
            if self._call is None:
                self.usable = False
                return None
        fd = self._call(dirfd, path, flags | _CLOEXEC, mode if flags & os.O_CREAT else 0)
        if fd >= 0:
            return fd
        code = -fd
        if code == errno.ENOSYS:
            self.usable = False  # an older kernel (before 5.6) or a filter: walk from now on
            return None
        if code in (
            errno.ELOOP,
            errno.ENOTDIR,
            errno.EXDEV,
            errno.EAGAIN,
            errno.EPERM,
            errno.EINVAL,
        ):
            return None  # a link or ".." on the way (or a filter): the walk decides
        raise OSError(code, os.strerror(code), path)


_openat2 = _Openat2()


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


@dataclass(frozen=True)
class Entry:
    """One folder entry: its name and ``lstat`` (a link is a link, never its target)."""

    name: str
    stat: os.stat_result

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.stat.st_mode)

    @property
    def is_link(self) -> bool:
        return stat.S_ISLNK(self.stat.st_mode)


@dataclass(frozen=True)
class Beneath:
    """Paths beneath ``root`` (absolute under it, or relative to it); ``hidden`` folders (and
    what lies in them) are refused even when they lie beneath ``root``."""

    root: Path
    hidden: tuple[Path, ...] = ()
    _inside: tuple[Path, ...] = field(default=(), init=False, repr=False)
    _marks: tuple[str, ...] = field(default=(), init=False, repr=False)  # "<hidden folder>/"

    def __post_init__(self) -> None:
        root = Path(os.path.realpath(self.root))
        object.__setattr__(self, "root", root)
        inside = tuple(
            h for h in (Path(os.path.realpath(p)) for p in self.hidden) if h.is_relative_to(root)
        )
        object.__setattr__(self, "_inside", inside)
        object.__setattr__(self, "_marks", tuple(f"{h}/" for h in inside))

    # -- resolving ------------------------------------------------------------------------

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the root; :class:`Escape` for an absolute path elsewhere."""
        text = os.fspath(path)
        if not os.path.isabs(text):
            return text
        root = str(self.root)
        if text == root or root == "/":
            return text[len(root) :].lstrip("/") or "."
        if text.startswith(root + "/"):
            return text[len(root) + 1 :] or "."
        raise Escape(errno.EXDEV, f"{text} is not under {root}")

    def hides(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (absolute, as a listing of the root names it) lies in a hidden
        folder beneath the root."""
        # asked for every listed file: one string test, none when nothing is hidden here
        return bool(self._marks) and f"{os.fspath(path)}/".startswith(self._marks)

    def _hidden_ids(self) -> frozenset[tuple[int, int]]:
        found = set()
        for folder in self._inside:
            try:
                found.add(_identity(os.stat(folder)))
            except OSError:
                continue
        return frozenset(found)

    def open(
        self,
        path: str | os.PathLike[str],
        flags: int = os.O_RDONLY,
        mode: int = 0o666,
        *,
        through_links: bool = True,
    ) -> tuple[int, str]:
        """An open descriptor of ``path`` (``os.open`` flags) and its path from the root as
        walked (links resolved), e.g. for a check on what was really reached. Not
        ``through_links``: a link anywhere on the path is :class:`Escape`, even one that
        stays beneath the root."""
        rel = self.relative(path)
        root_fd = os.open(self.root, _WALK)
        try:
            if not self._inside:
                fd = _openat2(root_fd, rel, flags | _NOFOLLOW, mode)
                if fd is not None:
                    if not (flags & _O_PATH and stat.S_ISLNK(os.fstat(fd).st_mode)):
                        return fd, os.path.normpath(rel)
                    os.close(fd)  # O_PATH opened a last link itself: the walk follows it
            return self._walk(root_fd, rel, flags, mode, through_links)
        finally:
            os.close(root_fd)

    def _walk(
        self, root_fd: int, rel: str, flags: int, mode: int, through_links: bool
    ) -> tuple[int, str]:
        hidden = self._hidden_ids()
        fds = [os.dup(root_fd)]  # the folders of `names`, the root first
        names: list[str] = []
        todo = [p for p in reversed(rel.split("/")) if p not in ("", ".")]
        links = 0

        def follow(name: str, target: str) -> None:
            """Walk on through the link ``name`` (its text ``target``) beneath the root."""
            nonlocal links
            if not through_links:
                where = "/".join([*names, name])
                raise Escape(errno.ELOOP, f"{where} is a link; not followed here")
            links += 1
            if links > MAX_LINKS:
                raise OSError(errno.ELOOP, "too many levels of links", rel)
            if target.startswith("/"):
                try:
                    target = self.relative(os.path.normpath(target))
                except Escape:
                    where = "/".join([*names, name])
                    raise Escape(
                        errno.EXDEV, f"{where} is a link to {target}, outside {self.root}"
                    ) from None
                for folder in fds[1:]:
                    os.close(folder)
                del fds[1:], names[:]
            todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))

        try:
            while todo:
                name = todo.pop()
                if name == "..":
                    if not names:
                        raise Escape(errno.EXDEV, f"{rel} leads above {self.root} (through '..')")
                    names.pop()
                    os.close(fds.pop())
                    continue
                last = not todo
                opening = (flags | _NOFOLLOW | _CLOEXEC) if last else _WALK
                try:
                    fd = os.open(name, opening, mode, dir_fd=fds[-1])
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    try:
                        target = os.readlink(name, dir_fd=fds[-1])
                    except OSError:
                        raise exc from None  # not a link: the open's own error
                    follow(name, target)
                    continue
                st = os.fstat(fd)
                if stat.S_ISLNK(st.st_mode):  # O_PATH | O_NOFOLLOW opens the link itself
                    os.close(fd)
                    follow(name, os.readlink(name, dir_fd=fds[-1]))
                    continue
                if hidden and _identity(st) in hidden:
                    os.close(fd)
                    raise Escape(errno.EACCES, f"{'/'.join([*names, name])} is kept hidden")
                names.append(name)
                fds.append(fd)
                if last:
                    return os.dup(fd), "/".join(names)
            # the path ended at a folder (the root, or "..")
            fd = os.open(".", flags | _CLOEXEC, mode, dir_fd=fds[-1])
            return fd, "/".join(names) or "."
        finally:
            for folder in fds:
                os.close(folder)

    @contextmanager
    def _parent(
        self, path: str | os.PathLike[str], *, make: bool = False, through_links: bool = True
    ) -> Iterator[tuple[int, str, str]]:
        """The open folder of ``path`` (closed on leaving), the last name and the folder's
        path from the root."""
        rel = os.path.normpath(self.relative(path))
        folder, name = os.path.split(rel)
        if name in ("", ".", ".."):
            raise IsADirectoryError(errno.EISDIR, f"{rel} names a folder, not an entry in one")
        if make and folder:
            self.mkdirs(folder, through_links=through_links)
        flags = os.O_RDONLY | _DIRECTORY
        fd, walked = self.open(folder or ".", flags, through_links=through_links)
        try:
            yield fd, name, walked
        finally:
            os.close(fd)

    # -- reading --------------------------------------------------------------------------

    def read_bytes(
        self, path: str | os.PathLike[str], limit: int | None = None, *, follow: bool = True
    ) -> bytes:
        """The bytes of a regular file (a folder, device or pipe is refused, never waited on);
        not ``follow``: a link as the last name is refused too."""
        return _read_all(self.open_file(path, follow=follow), limit)

    def open_file(self, path: str | os.PathLike[str], *, follow: bool = True) -> int:
        """A blocking descriptor of a regular file, to read (a folder, device or pipe is
        refused, never waited on); not ``follow``: a link as the last name is refused too."""
        if follow:
            return _regular(self.open(path, os.O_RDONLY | _NONBLOCK)[0], os.fspath(path))
        with self._parent(path) as (folder, name, _):
            return _regular(open_child(folder, name, os.O_RDONLY | _NONBLOCK), name)

    def stat(
        self, path: str | os.PathLike[str], *, follow: bool = True, through_links: bool = True
    ) -> os.stat_result:
        """``stat`` (``follow``: through links beneath the root) or ``lstat`` of ``path``
        (not ``through_links``: a link on the way to it is :class:`Escape`)."""
        if follow:
            fd, _ = self.open(path, _O_PATH or os.O_RDONLY | _NONBLOCK)
            try:
                return os.fstat(fd)
            finally:
                os.close(fd)
        if os.path.normpath(self.relative(path)) == ".":
            return self.stat(".", follow=True)
        with self._parent(path, through_links=through_links) as (folder, name, _):
            return os.stat(name, dir_fd=folder, follow_symlinks=False)

    def exists(self, path: str | os.PathLike[str]) -> bool:
        try:
            self.stat(path)
        except (OSError, ValueError):
            return False
        return True

    def readlink(self, path: str | os.PathLike[str]) -> str:
        with self._parent(path) as (folder, name, _):
            return os.readlink(name, dir_fd=folder)

    def open_dir(self, path: str | os.PathLike[str]) -> tuple[int, str]:
        """A descriptor of folder ``path`` that lists its entries (see :func:`entries`)."""
        return self.open(path, os.O_RDONLY | _DIRECTORY)

    def listdir(self, path: str | os.PathLike[str]) -> list[Entry]:
        fd, _ = self.open_dir(path)
        try:
            return entries(fd)
        finally:
            os.close(fd)

    # -- writing --------------------------------------------------------------------------

    def mkdirs(
        self, path: str | os.PathLike[str], mode: int = 0o777, *, through_links: bool = True
    ) -> str:
        """Make folder ``path`` and the missing ones above it (``mkdir -p``), beneath the root."""
        rel = os.path.normpath(self.relative(path))
        walked = "."
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        flags = os.O_RDONLY | _DIRECTORY
        for depth in range(1, len(parts) + 1):
            step = "/".join(parts[:depth])
            try:
                fd, walked = self.open(step, flags, through_links=through_links)
            except FileNotFoundError:
                with self._parent(step, through_links=through_links) as (folder, name, _):
                    try:
                        os.mkdir(name, mode, dir_fd=folder)
                    except FileExistsError:
                        pass  # made meanwhile (or a link there now: the open below decides)
                fd, walked = self.open(step, flags, through_links=through_links)
            os.close(fd)
        return walked

    def write_atomic(
        self,
        path: str | os.PathLike[str],
        data: bytes,
        *,
        mode: int | None = None,
        exclusive: bool = False,
        suffix: str = ".vis-tmp",
        check: Callable[[str], None] | None = None,
        through_links: bool = True,
    ) -> str:
        """Write ``data`` to a new temporary file beside ``path`` and rename it over ``path``
        (``exclusive``: only if nothing is there, else ``FileExistsError``). The file gets
        ``mode``, else 0600. ``check`` sees the path from the root that will be written (links
        resolved) first and may refuse it. Returns that path."""
        with self._parent(path, make=True, through_links=through_links) as (folder, name, walked):
            written = os.path.normpath(os.path.join(walked, name))
            if check is not None:
                check(written)
            temp = f".{name}.{os.urandom(6).hex()}{suffix}"
            real = os.path.normpath(os.path.join(self.root, walked, temp))
            with journaled(real):  # named while it exists: a crash leaves it to the next start
                try:
                    fd = os.open(
                        temp,
                        os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                        0o600,
                        dir_fd=folder,
                    )
                    try:
                        with os.fdopen(fd, "wb", closefd=False) as stream:
                            stream.write(data)
                        if mode is not None:
                            os.fchmod(fd, mode)
                    finally:
                        os.close(fd)
                    if exclusive:
                        _link_new(folder, temp, name)
                    else:
                        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
                except BaseException:
                    try:
                        os.unlink(temp, dir_fd=folder)
                    except OSError:
                        pass  # never made, or renamed already
                    raise
        return written

    def chmod(self, path: str | os.PathLike[str], mode: int, *, through_links: bool = True) -> None:
        """Give the regular file ``path`` ``mode``; a link as its last name (swapped in by a
        block) is refused, not followed. Its descriptor is changed, not a name looked up
        again, and a mode that denies reading does not stand in the way."""
        with self._parent(path, through_links=through_links) as (folder, name, _):
            fd = os.open(name, (_O_PATH or os.O_RDONLY) | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, f"{path} is not a regular file; its mode is kept")
            if _O_PATH:
                os.chmod(f"/proc/self/fd/{fd}", mode)  # the file the descriptor holds
            else:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def unlink(self, path: str | os.PathLike[str], *, through_links: bool = True) -> None:
        with self._parent(path, through_links=through_links) as (folder, name, _):
            os.unlink(name, dir_fd=folder)

    def symlink(self, target: str, path: str | os.PathLike[str]) -> None:
        """Make ``path`` a link whose text is ``target`` (text only: nothing is resolved or
        written through it). Its folder, made when missing, is reached through no link at
        all; anything already named ``path`` stays (``FileExistsError``)."""
        with self._parent(path, make=True, through_links=False) as (folder, name, _):
            os.symlink(target, name, dir_fd=folder)

    def remove_link(self, path: str | os.PathLike[str], target: str) -> None:
        """Remove the link ``path`` itself, never what it leads to, when its text is still
        ``target`` (else ``FileExistsError``: something else is there now). Its folder is
        reached through no link at all."""
        with self._parent(path, through_links=False) as (folder, name, _):
            try:
                if os.readlink(name, dir_fd=folder) != target:
                    raise FileExistsError(errno.EEXIST, f"{path} now links elsewhere")
                os.unlink(name, dir_fd=folder)
            except OSError as exc:
                if exc.errno == errno.EINVAL:  # readlink of what is no link (a file, a folder)
                    raise FileExistsError(errno.EEXIST, f"{path} is no longer a link") from None
                raise

    def rmdir(self, path: str | os.PathLike[str]) -> None:
        """Remove the empty folder ``path`` (``OSError`` when it holds anything)."""
        with self._parent(path) as (folder, name, _):
            os.rmdir(name, dir_fd=folder)

    def replace(self, source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        """Rename ``source`` over ``target``, both beneath the root."""
        with (
            self._parent(source) as (src, src_name, _),
            self._parent(target, make=True) as (dst, dst_name, _),
        ):
            os.replace(src_name, dst_name, src_dir_fd=src, dst_dir_fd=dst)

    def walked(self, path: str | os.PathLike[str]) -> Path:
        """Where ``path`` really leads (links resolved beneath the root), as an absolute path;
        for a path that does not exist yet, its folder resolved and its name appended."""
        try:
            fd, rel = self.open(path, _O_PATH or os.O_RDONLY | _NONBLOCK)
            os.close(fd)
        except FileNotFoundError:
            with self._parent(path) as (_, name, walked):
                rel = os.path.join(walked, name)
        return Path(os.path.normpath(self.root / rel))


def _link_new(folder: int, temp: str, name: str) -> None:
    """Give the written ``temp`` the name ``name`` unless something has that name already."""
    try:
        os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        # no hard links here: take the name first, then put the bytes over it
        reserved = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder
        )
        os.close(reserved)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        return
    os.unlink(temp, dir_fd=folder)


def entries(fd: int) -> list[Entry]:
    """The entries of an open folder, each with its ``lstat``, sorted by name."""
    found = []
    with os.scandir(fd) as listing:
        for item in listing:
            try:
                found.append(Entry(item.name, item.stat(follow_symlinks=False)))
            except OSError:
                continue  # removed meanwhile
    return sorted(found, key=lambda e: e.name)


def open_child(fd: int, name: str, flags: int = os.O_RDONLY) -> int:
    """Entry ``name`` of the open folder ``fd``, never through a link."""
    return os.open(name, flags | _NOFOLLOW | _CLOEXEC, dir_fd=fd)


def read_child(fd: int, name: str, limit: int | None = None) -> bytes:
    """The bytes of regular file ``name`` in the open folder ``fd`` (never through a link)."""
    return _read_all(_regular(open_child(fd, name, os.O_RDONLY | _NONBLOCK), name), limit)


def _read_all(fd: int, limit: int | None) -> bytes:
    """The bytes of the open file ``fd`` (at most ``limit``), which is closed."""
    try:
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return stream.read() if limit is None else stream.read(limit)
    finally:
        os.close(fd)


def _regular(fd: int, name: str) -> int:
    """``fd``, opened not to wait, made blocking when it is a regular file; else it is closed
    and a folder, device or pipe refused."""
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", name)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", name)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
