"""Copy files the cheapest way the filesystem allows (a reflink clone, else a kernel copy),
never as hard links: a draft's write must never reach the live file."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

FICLONE = 0x40049409  # linux/fs.h: share the source's extents (btrfs, XFS, bcachefs…)


def clone_file(source: Path, target: Path, *, made: bool = False) -> None:
    """``target`` as a copy of ``source`` (a link as a link), sharing blocks where possible;
    ``made``: its folder exists already."""
    if not made:
        target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_symlink():
        if target.is_symlink() or target.exists():
            target.unlink()
        os.symlink(os.readlink(source), target)
        return
    if target.is_symlink():
        target.unlink()
    with open(source, "rb") as src:
        mode = os.fstat(src.fileno()).st_mode & 0o777
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as dst:
            try:
                fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
            except OSError:
                shutil.copyfileobj(src, dst, 1 << 20)  # sendfile/copy_file_range underneath
            os.fchmod(dst.fileno(), mode)


def write_file(target: Path, data: bytes, *, executable: bool = False, link: bool = False) -> None:
    """Replace ``target`` at once (a temporary beside it, then a rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.vis-draft")
    if temporary.is_symlink() or temporary.exists():
        temporary.unlink()
    if link:
        os.symlink(os.fsdecode(data), temporary)
    else:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "wb") as out:
            out.write(data)
            if executable:
                os.fchmod(out.fileno(), 0o755)
    os.replace(temporary, target)


def remove_file(target: Path) -> None:
    if target.is_symlink() or target.exists():
        target.unlink()


def content_id(path: Path, object_format: str = "sha1") -> str | None:
    """Git's blob id of the file (of the link's text for a link); ``None`` when absent."""
    try:
        data = os.fsencode(os.readlink(path)) if path.is_symlink() else path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    digest = hashlib.new(object_format)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def remove_tree(folder: Path) -> None:
    """Delete ``folder`` and everything in it (read-only folders too)."""

    def writable(function: object, path: str, _info: object) -> None:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, onerror=writable)
        else:
            os.unlink(path)

    if folder.exists() or folder.is_symlink():
        shutil.rmtree(folder, onerror=writable)
