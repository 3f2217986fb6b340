"""Copy files the cheapest way the filesystem allows (a reflink clone, else a kernel copy of
the ranges that hold data, so a sparse file stays sparse), never as hard links: a draft's
write must never reach the live file. Every copy (a draft's, ``vis replay``'s) is bounded per
file and in all by a :class:`Budget`, and never opens a pipe, socket or device."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from vis_core.drafts.errors import DraftError
from vis_core.system.quiet import model_stopped
from vis_core.text_limits import format_size
from vis_core.tools.beneath import Beneath

FICLONE = 0x40049409  # linux/fs.h: share the source's extents (btrfs, XFS, bcachefs…)
LARGEST_FILE = 256 << 20  # bytes of one file a copy takes or a draft compares (docs/security.md)
LARGEST_COPY = 4 << 30  # bytes one copy takes in all, by the files' sizes (holes count)
PIECE = 1 << 20  # bytes read at a time


class Budget:
    """What one copy (a draft's start, sync or approval; ``vis replay``'s workspace) may
    still take: a file over :data:`LARGEST_FILE`, or one that takes the sizes copied past
    :data:`LARGEST_COPY`, is refused by name (:class:`DraftError`). A block makes a sparse
    terabyte, or a file with a thousand hard links, in an instant; copying them would not be
    free. Shared by the threads of one copy."""

    def __init__(self, who: str = "a draft") -> None:
        self.who = who
        self._left = LARGEST_COPY
        self._lock = threading.Lock()

    def take(self, name: str, size: int) -> None:
        if size > LARGEST_FILE:
            raise too_large(name, size, self.who)
        with self._lock:
            if size > self._left:
                raise DraftError(
                    f"{name} ({format_size(size)}) takes what {self.who} copies past "
                    f"{format_size(LARGEST_COPY)} in all; move large files out of the workspace "
                    "and try again"
                )
            self._left -= size


def clone_file(
    source: Beneath,
    name: str,
    target: Path,
    *,
    made: bool = False,
    budget: Budget | None = None,
) -> bool:
    """``target`` as a copy of ``name`` beneath ``source`` (a link as a link), sharing blocks
    where possible and keeping holes; ``made``: its folder exists already; ``budget``: what
    the copy this file is part of may still take (a budget of its own without one). Opened
    beneath ``source`` without following a link out of it: the model's code may swap a
    folder on the way for a link to a file the jail hides while Vis copies. False (nothing
    copied) when ``name`` is not a file or a link (a folder, a pipe, gone): a pipe, socket
    or device is never opened (opening a pipe waits for a writer)."""
    try:
        mode = source.stat(name, follow=False).st_mode
        if stat.S_ISLNK(mode):
            if not made:
                target.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(target):
                target.unlink()
            os.symlink(source.readlink(name), target)
            return True
        if not stat.S_ISREG(mode):
            return False
        fd = source.open(name, os.O_RDONLY | os.O_NONBLOCK)[0]
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped since: O_NONBLOCK did not wait on it
            return False
        (budget or Budget()).take(name, info.st_size)
        os.set_blocking(fd, True)
        if not made:
            target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            try:
                fcntl.ioctl(out, FICLONE, fd)
            except OSError:
                copy_data(fd, out, info.st_size)
            os.fchmod(out, info.st_mode & 0o777)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return True


def copy_data(source: int, target: int, size: int) -> None:
    """The first ``size`` bytes of the open file ``source`` into the empty ``target``, holes
    kept: only the ranges that hold data are copied (``SEEK_DATA``/``SEEK_HOLE``), and the
    copy is given its length last, so a sparse file's copy takes no more disk than it does.
    A file that shrinks meanwhile ends the copy early (at ``size`` still)."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(source, offset, os.SEEK_DATA)
            end = min(os.lseek(source, start, os.SEEK_HOLE), size)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data past offset: a hole to the end
                break
            if exc.errno != errno.EINVAL:  # EINVAL: the filesystem cannot say; all is data
                raise
            start, end = offset, size
        if start >= size or not _copy_range(source, target, start, end):
            break
        offset = end
    os.ftruncate(target, size)


def _copy_range(source: int, target: int, start: int, end: int) -> bool:
    """Bytes ``start`` to ``end`` of ``source`` to the same place in ``target`` (a kernel
    copy, else a piece at a time); False when ``source`` ended first."""
    while start < end:
        try:
            done = os.copy_file_range(source, target, end - start, start, start)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
            piece = os.pread(source, min(end - start, PIECE), start)
            done = len(piece)
            if piece.count(0) != done:  # a piece of zeros stays a hole
                os.pwrite(target, piece, start)
        if not done:
            return False
        start += done
    return True


def copy_tree(source: Path, target: Path, budget: Budget) -> list[str]:
    """Copy everything beneath ``source`` into the new folder ``target``: folders, files
    (holes kept, within ``budget``) and links as links, with their modes and modification
    times. Each folder is opened from the one above (``os.fwalk``) and each file beneath
    ``source`` (:func:`clone_file`), never through a link. A named pipe, socket or device is
    never opened: it is left out, and named in the list returned. A folder that cannot be
    read stops the copy (:class:`OSError` naming it)."""
    files = Beneath(source)
    left_out: list[str] = []
    folders: list[tuple[Path, os.stat_result]] = [(target, os.stat(source))]
    target.mkdir(mode=0o700)
    for folder, dirs, names, fd in os.fwalk(source, onerror=_unless_gone):
        inside = os.path.relpath(folder, source)
        for name in sorted(dirs + names):  # a link to a folder is among dirs, never entered
            rel = os.path.normpath(os.path.join(inside, name))
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            if stat.S_ISDIR(info.st_mode):
                (target / rel).mkdir(mode=0o700)
                folders.append((target / rel, info))
            elif not clone_file(files, rel, target / rel, made=True, budget=budget):
                if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                    left_out.append(rel)
            else:
                times = (info.st_atime_ns, info.st_mtime_ns)
                os.utime(target / rel, ns=times, follow_symlinks=False)
    for folder, info in reversed(folders):  # filled first: a read-only folder last
        os.chmod(folder, stat.S_IMODE(info.st_mode))
        os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns))
    return left_out


def _unless_gone(exc: OSError) -> None:
    if not isinstance(exc, FileNotFoundError):
        raise exc


def content_id(source: Beneath, name: str, object_format: str = "sha1") -> str | None:
    """Git's blob id of file ``name`` beneath ``source`` (of the link's text for a link, never
    what a link leads to), read a piece at a time; ``None`` when absent or neither a file nor
    a link. A file over ``LARGEST_FILE`` is refused (:class:`DraftError`)."""
    digest = hashlib.new(object_format)
    try:
        if stat.S_ISLNK(source.stat(name, follow=False).st_mode):
            data = os.fsencode(source.readlink(name))
            digest.update(b"blob %d\0" % len(data))
            digest.update(data)
            return digest.hexdigest()
        fd = source.open_file(name, follow=False)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # EINVAL: a pipe or device, never read
            raise
        return None
    try:
        size = os.fstat(fd).st_size
        if size > LARGEST_FILE:
            raise too_large(name, size)
        digest.update(b"blob %d\0" % size)
        while size and (piece := os.read(fd, min(size, PIECE))):
            digest.update(piece)
            size -= len(piece)
    finally:
        os.close(fd)
    return digest.hexdigest()


def too_large(name: str, size: int, who: str = "a draft") -> DraftError:
    """Why file ``name`` of ``size`` bytes is not copied or compared (a sparse file claims
    terabytes at no cost to whoever made it; copying or hashing them would not be free)."""
    return DraftError(
        f"{name} is {format_size(size)}, over the {format_size(LARGEST_FILE)} {who} copies "
        "or compares of one file; move it out of the workspace and try again"
    )


def remove_tree(folder: Path) -> None:
    """Delete ``folder`` and everything in it (read-only folders too). ``os.fwalk`` and
    ``shutil.rmtree`` open each folder from the one above by descriptor, never through a
    link, and the folders are made writable through those descriptors: the model's code may
    swap a folder of the draft for a link meanwhile, and nothing outside it is changed."""
    if folder.is_symlink():
        folder.unlink()
        return
    if not folder.is_dir():
        return
    for _, names, _, fd in os.fwalk(folder):
        os.fchmod(fd, 0o700)  # its entries can go
        for name in names:  # before the walk opens them; a link is refused, not followed
            with contextlib.suppress(OSError, ValueError, NotImplementedError):
                os.chmod(name, 0o700, dir_fd=fd, follow_symlinks=False)
    shutil.rmtree(folder)


# Makes the new file (or link) at the temporary path it is given; ``None``: remove the file.
Writer = Callable[[Path], None] | None


def land_files(
    root: Path,
    changes: Sequence[tuple[str, Writer]],
    then: Callable[[], None] = lambda: None,
    *,
    check: Callable[[], None] = lambda: None,
) -> None:
    """Write ``changes`` beneath ``root`` all or none: ``check`` runs first (raises to
    refuse), every new file is staged beside its target, then each is renamed in (the file
    it replaces kept aside); ``then`` runs last (e.g. moving a branch). A failure at any step
    puts back every file as it was and raises :class:`LandingFailed` naming the file. The
    model's commands are held meanwhile (:func:`~vis_core.system.quiet.model_stopped`)."""
    with contextlib.ExitStack() as held:
        _land(root, changes, then, check, held)


def _land(
    root: Path,
    changes: Sequence[tuple[str, Writer]],
    then: Callable[[], None],
    check: Callable[[], None],
    held: contextlib.ExitStack,
) -> None:
    token = os.urandom(4).hex()
    made: list[Path] = []  # folders made for new files (removed again on failure)
    removed: list[Path] = []
    staged: list[tuple[Path, Path]] = []  # (target, temporary)
    later: list[tuple[Path, Callable[[Path], None]]] = []  # a removed file on the way now
    done: list[tuple[Path, Path | None]] = []  # (target, what it held, kept aside; None: new)
    current = ""

    def stage(target: Path, writer: Callable[[Path], None]) -> Path:
        """The new file written beside ``target``, its folders made first."""
        _make_folders(root, target.parent, made)
        temporary = target.with_name(f".{target.name}.vis-{token}")
        staged.append((target, temporary))
        writer(temporary)
        return temporary

    def kept_of(target: Path) -> Path:
        return target.with_name(f".{target.name}.vis-{token}-was")

    def rename_in(target: Path, temporary: Path) -> None:
        kept = kept_of(target)
        if _is_folder(target):  # a folder the draft replaced with a file: its files are aside
            if any(not n.endswith(f".vis-{token}-was") for n in os.listdir(target)):
                raise OSError(f"{target.name} is a folder that holds more than the draft removes")
            os.rename(target, kept)
            done.append((target, kept))
            os.rename(temporary, target)
        elif os.path.lexists(target):
            os.link(target, kept, follow_symlinks=False)
            try:
                os.replace(temporary, target)
            except OSError:
                os.unlink(kept)
                raise
            done.append((target, kept))
        else:
            os.rename(temporary, target)
            done.append((target, None))

    gone = {name for name, writer in changes if writer is None}
    try:
        # the model's commands still running in the workspace (started before its draft)
        # are held: none can swap a folder for a link between a check and a rename
        held.enter_context(model_stopped())
        check()
        for name, writer in changes:
            current = name
            target = root / name
            link = link_on_the_way(root, name)
            if link is not None and link not in gone:
                raise OSError(f"a folder on the way to {name} is a symbolic link")
            if writer is None:
                removed.append(target)
            elif link is not None or _file_on_the_way(root, target.parent):
                later.append((target, writer))  # the draft replaced it with a folder
            else:
                stage(target, writer)
        for target in removed:  # first: a folder replaced by a file must be empty of them
            current = target.relative_to(root).as_posix()
            if os.path.lexists(target):
                kept = kept_of(target)
                os.rename(target, kept)
                done.append((target, kept))
        for target, temporary in staged:
            current = target.relative_to(root).as_posix()
            rename_in(target, temporary)
        for target, writer in later:
            current = target.relative_to(root).as_posix()
            rename_in(target, stage(target, writer))
        current = ""
        then()
    except BaseException as exc:
        problems = _undo(done, staged, made)
        where = f" at {current}" if current else ""
        raise LandingFailed(f"{exc}{where}", current, problems) from exc
    for _target, kept in done:  # a folder set aside holds files set aside: gone with it
        with contextlib.suppress(OSError):
            if kept is not None and _is_folder(kept):
                remove_tree(kept)
            elif kept is not None:
                os.unlink(kept)


class LandingFailed(OSError):
    """Writing the files failed (``name``); every file was put back (``problems``: what
    could not be, by name)."""

    def __init__(self, message: str, name: str, problems: list[str]) -> None:
        super().__init__(message)
        self.name = name
        self.problems = problems


def link_on_the_way(root: Path, name: str) -> str | None:
    """The first folder on the way to ``name`` beneath ``root`` that is a symbolic link (its
    path relative to ``root``), never looked at through it; ``None``: there is none."""
    parts = Path(name).parts[:-1]
    for end in range(1, len(parts) + 1):
        if (root.joinpath(*parts[:end])).is_symlink():
            return "/".join(parts[:end])
    return None


def _make_folders(root: Path, folder: Path, made: list[Path]) -> None:
    missing: list[Path] = []
    while folder != root and not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        os.mkdir(path)
        made.append(path)


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _file_on_the_way(root: Path, folder: Path) -> bool:
    """Whether something other than a folder stands where ``folder`` (beneath ``root``) or a
    folder above it would be."""
    while folder != root and not os.path.lexists(folder):
        folder = folder.parent
    return folder != root and not _is_folder(folder)


def _undo(
    done: list[tuple[Path, Path | None]],
    staged: list[tuple[Path, Path]],
    made: list[Path],
) -> list[str]:
    problems: list[str] = []
    for target, kept in reversed(done):
        try:
            if kept is None:
                os.unlink(target)
                continue
            if _is_folder(kept):  # a folder a file replaced
                os.unlink(target)
            elif _is_folder(target):  # a folder made where a file was (emptied above)
                os.rmdir(target)
            os.replace(kept, target)
        except OSError as exc:
            problems.append(f"{target}: {exc}")
    for _target, temporary in staged:
        if os.path.lexists(temporary):
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    return problems
