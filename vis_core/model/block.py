"""What one block did to the workspace: each file it created, changed or removed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

PYTHON_EXECUTION = "python_execution"  # the tool whose calls are blocks of code


class FileChangeKind(StrEnum):
    CREATED = "created"
    CHANGED = "changed"
    REMOVED = "removed"


@dataclass(frozen=True)
class FileChange:
    """One file a block touched: its workspace-relative ``path``, how, the unified ``diff``
    (empty when none could be made) and ``note`` saying why not (binary, too large, cut)."""

    path: str
    kind: FileChangeKind
    diff: str = ""
    added: int = 0
    removed: int = 0
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", FileChangeKind(self.kind))

    def to_plain(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind.value,
            "diff": self.diff,
            "added": self.added,
            "removed": self.removed,
            "note": self.note,
        }

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> FileChange:
        return cls(**{key: data[key] for key in data if key in _FIELDS})


_FIELDS = ("path", "kind", "diff", "added", "removed", "note")


def first_code_line(code: str, width: int = 80) -> str:
    """The block's first line that says something (not blank, not only a comment), cut at
    ``width`` characters."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith("#")] or lines
    line = said[0] if said else ""
    return line if len(line) <= width else line[: width - 1] + "…"


OUTPUT_TAIL_LINES = 10  # lines of what a finished block printed that `vis run` shows
_CUT_NOTE = "[Output truncated:"  # how the sandbox starts an output it cut (and saved)
# the count the sandbox's note gives of every line the block printed
_CUT_TOTAL = re.compile(r"showing the last [\d,]+ of ([\d,]+) lines")


def _cut_note(stdout: str) -> tuple[str, str]:
    """The sandbox's note in front of an output it cut (or ``""``) and the output after it."""
    if stdout.startswith(_CUT_NOTE) and "\n\n" in stdout:
        note, rest = stdout.split("\n\n", 1)
        return note, rest
    return "", stdout


def drawn_line(line: str) -> str:
    """One output line as a terminal draws it: a carriage return goes back to the line's
    start and what follows overwrites what was there (a progress bar shows its last draw)."""
    if "\r" not in line:
        return line
    shown = ""
    for part in line.split("\r"):
        shown = part + shown[len(part) :]
    return shown


def drawn_lines(text: str) -> list[str]:
    """``text``'s lines (ended by ``\\n`` only) as a terminal draws them (:func:`drawn_line`)."""
    return [drawn_line(line) for line in text.split("\n")]


def printed_line_count(stdout: str) -> int:
    """How many lines a block printed (as a terminal shows them: a line redrawn with carriage
    returns is one): the count in the sandbox's note when it cut the output (what is kept is
    only its end), else the lines of ``stdout``."""
    note, kept = _cut_note(stdout)
    total = _CUT_TOTAL.search(note)
    if total:
        return int(total.group(1).replace(",", ""))
    text = kept.rstrip("\n")
    return text.count("\n") + 1 if text else 0


@dataclass(frozen=True)
class OutputTail:
    """The end of what a block printed: its last ``lines``, how many ``earlier`` lines were
    left out, and the sandbox's ``note`` when it cut the output itself (where it was saved)."""

    lines: tuple[str, ...]
    earlier: int = 0
    note: str = ""


def output_tail(stdout: str, lines: int = OUTPUT_TAIL_LINES, width: int = 160) -> OutputTail:
    """The last ``lines`` lines of ``stdout`` as a terminal shows them (a line redrawn with
    carriage returns, a progress bar, shows its last draw), each cut at ``width``."""
    note, kept = _cut_note(stdout)
    text = kept.rstrip("\n")
    if not text.strip():
        return OutputTail((), 0, note)
    drawn = drawn_lines(text)
    shown = tuple(line if len(line) <= width else line[: width - 1] + "…" for line in drawn)
    # the earlier lines count those the sandbox cut off too
    printed = printed_line_count(stdout) if note else len(shown)
    last = shown[-lines:]
    return OutputTail(last, max(0, printed - len(last)), note)


def code_line_count(code: str) -> int:
    return len(code.rstrip("\n").splitlines())


def time_limit_note(seconds: float) -> str:
    """What a block stopped at its time limit says first, in front of its traceback."""
    return f"{_TIME_LIMIT_NOTE} of {seconds:g} s (setting block_time_limit) and was stopped."


_TIME_LIMIT_NOTE = "The block ran longer than its time limit"


def error_line(error: str) -> str:
    """The line that says an error: the first of its message (a traceback ends with
    ``Class: message``, whose message may go on over more lines after its frames); of a
    block stopped at its time limit, the note that says so (its traceback ends in a bare
    ``KeyboardInterrupt``)."""
    lines = [line for line in error.strip().splitlines() if line.strip()]
    if lines and lines[0].startswith(_TIME_LIMIT_NOTE):
        return lines[0]
    start = len(lines)
    while (
        start > 0 and not lines[start - 1][:1].isspace() and not _TRACEBACK.match(lines[start - 1])
    ):
        start -= 1  # up through the message's lines, to the last frame's (indented) line
    return lines[min(start, len(lines) - 1)].strip() if lines else ""


_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):$")


# ``VisToolError: PatchError: patch: …``: the exception class names in front of a message.
_CLASS_PREFIX = re.compile(r"^(?:[A-Z]\w*(?:Error|Exception|Interrupt|Exit)|[A-Z]\w*\.\w+):\s*")


# A message that is only a value (``KeyError: 'missing'``, ``IndexError: 3``): without its
# class name it says nothing, so the class name stays.
_BARE_VALUE = re.compile(r"^(?:'[^']*'|\"[^\"]*\"|-?\d[\w.]*|[\[({<].*)$")


def plain_error(text: str) -> str:
    """``text`` without the exception class names in front of it (they mean nothing to the
    person); the rest, the message, stays as it was. A message that is only a value keeps
    the class name nearest it (``KeyError: 'missing'``, not ``'missing'``)."""
    text = text.strip()
    while True:
        shorter = _CLASS_PREFIX.sub("", text, count=1)
        if shorter == text or not shorter or _BARE_VALUE.match(shorter):
            return text
        text = shorter


def format_duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 120:
        return f"{seconds:.0f}s"
    return f"{int(seconds // 60)}m {int(seconds % 60):02d}s"
