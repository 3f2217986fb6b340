"""Read a small file a checkout controls without ever hanging on it."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def small_bytes(path: Path | str, limit: int | None, *, follow: bool = True) -> bytes | None:
    """The bytes of ``path``, or None unless it is a regular file of at most ``limit`` bytes
    (None: any size); a link to one is followed unless ``follow`` is False. Checked on the
    opened file: a checkout's ``package.json -> /dev/zero`` would be read without end, a named
    pipe would block, and a link swapped after a check cannot redirect the read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            return file.read() if limit is None else file.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_within(path: Path, limit: int, within: Path | None, hidden: Sequence[Path] = ()) -> bytes:
    """At most ``limit`` bytes of regular file ``path`` (a link followed); ``within``: the
    file read must lie in that folder, and in none of the ``hidden`` folders (Vis's own,
    which may lie inside it). Checked on the opened file, so a link swapped after a check
    cannot redirect the read, and a pipe is never waited on. ``OSError`` says why not: a
    checkout's ``AGENTS.md -> ~/.ssh/id_rsa``, or a link a jailed block made to a file the
    jail hides, would reach the model as text."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if within is not None:
            opened = Path(os.path.realpath(f"/proc/self/fd/{fd}"))
            if not opened.is_absolute() or not opened.exists():  # no /proc: the name
                opened = Path(os.path.realpath(path))
            root = Path(os.path.realpath(within))
            if opened != root and root not in opened.parents:
                raise OSError(errno.EXDEV, f"it leads out of {root} (to {opened})")
            for folder in map(os.path.realpath, hidden):
                if opened.is_relative_to(folder):
                    raise OSError(errno.EACCES, f"it leads into Vis's own folder {folder}")
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit)
    finally:
        os.close(fd)


# the ``---`` header of a Markdown file (skills, command files, extension guides)
FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)


def front_matter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """The YAML front matter of a Markdown file (``{}`` without one, or when it is not a
    mapping), the text after it, and why the header could not be read (None when it could):
    a checkout's header nested thousands deep is a problem said, never a ``RecursionError``."""
    match = FRONT_MATTER.match(text)
    if match is None:
        return {}, text, None
    import yaml  # with the first file that has front matter, not with every start

    body = text[match.end() :]
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        return {}, body, f"its front matter is not YAML ({exc})"
    except RecursionError:
        return {}, body, "its front matter nests too deeply to read"
    return (data if isinstance(data, dict) else {}), body, None


def small_text(path: Path, limit: int) -> str | None:
    """:func:`small_bytes` of ``path`` (a link followed) as text."""
    data = small_bytes(path, limit)
    return None if data is None else data.decode("utf-8", errors="replace")


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` of ``text`` with libyaml's parser where PyYAML has it (the pure
    Python one takes most of a second to give up on a file nested 3,000 deep); a file nested
    too deeply raises ``RecursionError`` either way, other faults ``yaml.YAMLError``."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    try:
        return yaml.load(text, Loader=loader)  # a safe loader
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml's own depth limit
            raise RecursionError(str(exc)) from None
        raise
