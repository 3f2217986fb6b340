"""Reading workspace files as text: clear refusals, line splitting, numbered output strings."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

BINARY_SNIFF_BYTES = 8192
MAX_SHOWN_LINE_CHARS = 2000


class ToolText(str):
    """The text a tool returns to the model, with facts for its Activity in ``info``."""

    info: dict[str, Any]

    def __new__(cls, text: str, **info: Any) -> ToolText:
        self = super().__new__(cls, text)
        self.info = info
        return self


class BinaryFileError(ValueError):
    """A file that is not UTF-8 text."""


# Line breaks str.splitlines knows besides "\n"; without them it splits exactly like split_lines.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only, each keeping its line ending (the last may have none)."""
    if not text:
        return []
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends=True)  # the same lines, split in C
    lines = text.split("\n")
    last = lines.pop()
    out = [line + "\n" for line in lines]
    if last:
        out.append(last)
    return out


def strip_eol(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def shown(line: str, limit: int = MAX_SHOWN_LINE_CHARS) -> str:
    """A line as displayed: very long lines are cut with a count of what was left out."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [+{len(line) - limit:,} chars]"


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def read_text(
    path: Path, label: str, *, tool: str, read: Callable[[Path], bytes] | None = None
) -> str:
    """The UTF-8 text of a file, or an error that says what is wrong and what to do; ``read``
    gets the bytes (a tool context's reader that no link leads out of the workspace)."""
    try:
        data = read(path) if read is not None else path.read_bytes()
    except FileNotFoundError:
        parent = path.parent
        hint = f"ls({label.rsplit('/', 1)[0]!r})" if "/" in label else "ls()"
        where = "" if parent.is_dir() else f" (its folder {parent} does not exist either)"
        raise FileNotFoundError(
            f"{tool}: no file {label}{where}; check the name with {hint} or grep()"
        ) from None
    except IsADirectoryError:
        raise IsADirectoryError(
            f"{tool}: {label} is a directory, not a file; list it with ls({label!r})"
        ) from None
    except NotADirectoryError:
        raise FileNotFoundError(
            f"{tool}: no file {label}: a part of the path before its name is a file, not a "
            "folder; check the path with ls()"
        ) from None
    except PermissionError as exc:
        if type(exc) is not PermissionError:
            raise  # a path leading out of the workspace says so itself
        raise PermissionError(f"{tool}: permission denied reading {label}") from None
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
        raise OSError(
            f"{tool}: {label} is not a regular file (a pipe, socket or device); {tool} reads "
            "files only"
        ) from None
    if looks_binary(data):
        raise BinaryFileError(
            f"{tool}: {label} is a binary file ({len(data):,} bytes); {tool} works on text only. "
            "Read it with Path(...).read_bytes() if you need its bytes."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BinaryFileError(
            f"{tool}: {label} is not UTF-8 text (byte {exc.start:,} is invalid); {tool} works "
            "on UTF-8 text only. Read it with Path(...).read_bytes() and decode it yourself."
        ) from None
