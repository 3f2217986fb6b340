"""Line-addressed edits: validation, rebasing onto a moved file, syntax checks and the diff."""

from __future__ import annotations

import ast
import difflib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vis_core.tools.pycheck import describe

CONTEXT_LINES = 3
# Steps of the search that moves edits onto a changed file, at most: the pairs of equal lines
# (read, now) it looks through, 0.2 µs each in Python (a big source file takes about 1 M).
MAX_REBASE_STEPS = 10_000_000


class PatchError(ValueError):
    """A patch that was refused; nothing was written."""


@dataclass(frozen=True)
class Edit:
    """Replace lines ``start``..``end`` (1-based, inclusive); ``end = start - 1`` inserts."""

    start: int
    end: int
    text: str

    @property
    def is_insert(self) -> bool:
        return self.end == self.start - 1


def _field(item: object, name: str, index: int) -> object:
    if isinstance(item, Mapping):
        if name not in item:
            raise PatchError(
                f"patch: edit {index} has no {name!r}; each edit is "
                "{'start': int, 'end': int, 'text': str}"
            )
        return item[name]
    if hasattr(item, name):
        return getattr(item, name)
    raise PatchError(
        f"patch: edit {index} must be a dict with start, end and text, got {type(item).__name__}"
    )


def _line_number(value: object, name: str, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PatchError(f"patch: edit {index} {name} must be an int, got {value!r}")
    return value


def parse_edits(edits: object) -> list[Edit]:
    """Edits from dicts (or records/tuples), checked and sorted; overlapping edits are refused."""
    if isinstance(edits, Mapping):
        edits = [edits]
    if isinstance(edits, str | bytes) or not isinstance(edits, Sequence):
        raise PatchError("patch: edits must be a list of {'start': int, 'end': int, 'text': str}")
    if not edits:
        raise PatchError("patch: edits is empty; pass at least one edit")
    parsed: list[Edit] = []
    for index, item in enumerate(edits):
        if isinstance(item, list | tuple) and len(item) == 3:
            start, end, text = item
        else:
            start, end, text = (_field(item, k, index) for k in ("start", "end", "text"))
        start = _line_number(start, "start", index)
        end = _line_number(end, "end", index)
        if not isinstance(text, str):
            kind = type(text).__name__
            raise PatchError(f"patch: edit {index} text must be a string, got {kind}")
        if start < 1:
            raise PatchError(f"patch: edit {index} start={start}; lines start at 1")
        if end < start - 1:
            raise PatchError(
                f"patch: edit {index} has end={end} before start={start}; use end >= start to "
                f"replace lines, or end = start - 1 = {start - 1} to insert before line {start}"
            )
        parsed.append(Edit(start, end, text))
    parsed.sort(key=lambda e: (e.start, e.end))
    for before, after in zip(parsed, parsed[1:], strict=False):
        # An insertion sits between lines start-1 and start; it may touch a replaced range.
        a_hi = before.end + (0.5 if before.is_insert else 0)
        b_lo = after.start - (0.5 if after.is_insert else 0)
        if b_lo <= a_hi:
            raise PatchError(
                f"patch: the edits of {_span(before)} and {_span(after)} overlap; merge them "
                "into one edit or give them separate lines"
            )
    return parsed


def _span(edit: Edit) -> str:
    """The lines an edit covers as a message names them (not its index in the list)."""
    if edit.is_insert:
        return f"the insert before line {edit.start}"
    return f"lines {edit.start}-{edit.end}" if edit.end != edit.start else f"line {edit.start}"


def check_ranges(edits: list[Edit], line_count: int, label: str, version: int) -> None:
    for edit in edits:
        if edit.end > line_count or edit.start > line_count + 1:
            raise PatchError(
                f"patch: the edit of {_span(edit)} is past the end of {label} @{version}, "
                f"which has {line_count:,} lines; to append, insert with start={line_count + 1}, "
                f"end={line_count}"
            )


class _TooMuch(Exception):
    """The matcher's steps ran out."""


class _Bounded(difflib.SequenceMatcher):
    """A SequenceMatcher (no junk) that stops with :class:`_TooMuch` once the pairs of equal
    lines its searches look through pass ``steps``: each search walks every line of ``b`` equal
    to each of ``a``'s, once per block it finds, so lines repeated throughout cost minutes."""

    def __init__(self, a: Sequence[str], b: Sequence[str], steps: int) -> None:
        super().__init__(None, a, b, autojunk=False)
        self.steps = steps
        self._a, self._counts = a, Counter(b)  # the lengths of difflib's b2j, without junk

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        end = len(self._a) if ahi is None else ahi
        self.steps -= sum(self._counts[line] for line in self._a[alo:end])
        if self.steps < 0:
            raise _TooMuch
        return super().find_longest_match(alo, ahi, blo, bhi)  # type: ignore[arg-type]


def matching_steps(a: Sequence[str], b: Sequence[str], *, autojunk: bool) -> int:
    """The pairs of equal lines of ``a`` and ``b`` that ``difflib.SequenceMatcher`` looks
    through (with ``autojunk``, as difflib does, not a line of ``b`` that 1% of its 200 or more
    lines are): its work grows with them, about 0.2 µs each."""
    counts = Counter(b)
    if autojunk and len(b) >= 200:
        popular = len(b) // 100 + 1
        counts = Counter({line: n for line, n in counts.items() if n <= popular})
    return sum(counts[line] for line in a)


def rebase(edits: list[Edit], seen: list[str], now: list[str], label: str) -> list[Edit]:
    """Move edits written against ``seen`` onto ``now``; refuse if an edited line changed, or
    once the matcher's searches looked through :data:`MAX_REBASE_STEPS` pairs of equal lines
    (:class:`_Bounded`): 6,000 equal lines took 11 s of Vis's CPU, 7,000 lines of 100 values
    6 s, and one of 100,000 lines would take hours, in a thread no Esc stops."""
    matcher = _Bounded(seen, now, MAX_REBASE_STEPS)
    try:
        blocks = matcher.get_matching_blocks()
    except _TooMuch:
        raise PatchError(
            f"patch: {label} changed since you read it, and repeats its lines so often that "
            "moving your edits onto it would take minutes; read it again with cat() and redo "
            "the edit against the new version"
        ) from None
    moved: list[int] = [-1] * len(seen)
    for a, b, size in blocks:
        for k in range(size):
            moved[a + k] = b + k
    out: list[Edit] = []
    for edit in edits:
        lo = edit.start - 1
        if edit.is_insert:
            if lo < len(seen) and moved[lo] >= 0:
                new_lo = moved[lo]
            elif lo > 0 and moved[lo - 1] >= 0:
                new_lo = moved[lo - 1] + 1
            elif not seen:
                new_lo = len(now)
            else:
                raise PatchError(
                    f"patch: the lines around {_span(edit)} in {label} changed since you "
                    "read it; read it again with cat() and redo the edit against the new version"
                )
            out.append(Edit(new_lo + 1, new_lo, edit.text))
            continue
        targets = moved[lo : edit.end]
        contiguous = all(t >= 0 for t in targets) and all(
            b == a + 1 for a, b in zip(targets, targets[1:], strict=False)
        )
        if not contiguous:
            raise PatchError(
                f"patch: {_span(edit)} of {label} changed since you read it; read the "
                "file again with cat() and redo the edit against the new version"
            )
        out.append(Edit(targets[0] + 1, targets[-1] + 1, edit.text))
    return out


def _new_lines(text: str, eol: str) -> list[str]:
    if not text:
        return []
    body = text.replace("\r\n", "\n")
    if eol != "\n":
        body = body.replace("\n", eol)
    if not body.endswith(eol):
        body += eol
    return [line + eol for line in body.split(eol)[:-1]]


def line_ending(lines: list[str]) -> str:
    crlf = sum(1 for line in lines[:200] if line.endswith("\r\n"))
    return "\r\n" if crlf * 2 > min(len(lines), 200) else "\n"


@dataclass(frozen=True)
class Applied:
    """The new lines and the edits as hunks: (old start, old lines, new lines), 0-based."""

    lines: list[str]
    hunks: list[tuple[int, list[str], list[str]]]


def apply_edits(lines: list[str], edits: list[Edit]) -> Applied:
    """Apply sorted, non-overlapping edits; keeps the file's line ending and final-newline style."""
    eol = line_ending(lines)
    n = len(lines)
    no_eol = n > 0 and not lines[-1].endswith("\n")
    work = lines[:-1] + [lines[-1] + eol] if no_eol else lines
    out: list[str] = []
    hunks: list[tuple[int, list[str], list[str]]] = []
    cursor = 0
    for edit in edits:
        lo, hi = edit.start - 1, edit.end
        new = _new_lines(edit.text, eol)
        if no_eol and lo == hi == n and cursor <= n - 1:
            lo = n - 1  # appending after a last line without EOL changes that line too
            new = [work[n - 1], *new]
        out.extend(work[cursor:lo])
        out.extend(new)
        hunks.append((lo, lines[lo:hi], new))
        cursor = hi
    out.extend(work[cursor:])
    if no_eol and out:
        last_end = hunks[-1][0] + len(hunks[-1][1]) if hunks else 0
        if last_end < n or hunks[-1][2]:
            stripped = out[-1][: -len(eol)] if out[-1].endswith(eol) else out[-1]
            if last_end >= n:
                hunks[-1][2][-1] = stripped
            out[-1] = stripped
    return Applied(out, hunks)


def _diff_rows(prefix: str, rows: list[str]) -> list[str]:
    out = []
    for row in rows:
        if row.endswith("\n"):
            out.append(prefix + row)
        else:
            out.append(prefix + row + "\n\\ No newline at end of file\n")
    return out


def _changed_parts(
    hunk: tuple[int, list[str], list[str]],
) -> list[tuple[int, list[str], list[str]]]:
    """``hunk`` as a line diff of what it replaced and what it wrote: the lines an edit wrote
    back as they were (at its start, its end or between) are not counted as changed."""
    lo, old, new = hunk
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        (lo + i1, old[i1:i2], new[j1:j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def unified_diff(label: str, old: list[str], applied: Applied, *, created: bool = False) -> str:
    """A unified diff of the edited lines (no whole-file comparison): each edit's hunk is a
    line diff of its before and after, so the counts are the file's."""
    hunks = [part for hunk in applied.hunks for part in _changed_parts(hunk)]
    if not hunks:
        return ""
    groups: list[list[tuple[int, list[str], list[str]]]] = []
    for hunk in hunks:
        if groups:
            last_lo, last_old, _ = groups[-1][-1]
            if hunk[0] - (last_lo + len(last_old)) <= 2 * CONTEXT_LINES:
                groups[-1].append(hunk)
                continue
        groups.append([hunk])
    head = "/dev/null" if created else f"a/{label}"
    out = [f"--- {head}\n", f"+++ b/{label}\n"]
    delta = 0
    for group in groups:
        first_lo = group[0][0]
        last_lo, last_old, _ = group[-1]
        old_from = max(0, first_lo - CONTEXT_LINES)
        old_to = min(len(old), last_lo + len(last_old) + CONTEXT_LINES)
        body: list[str] = _diff_rows(" ", old[old_from:first_lo])
        group_delta = 0
        for index, (lo, removed, added) in enumerate(group):
            body += _diff_rows("-", removed) + _diff_rows("+", added)
            group_delta += len(added) - len(removed)
            end = group[index + 1][0] if index + 1 < len(group) else old_to
            body += _diff_rows(" ", old[lo + len(removed) : end])
        old_count = old_to - old_from
        new_count = old_count + group_delta
        new_from = old_from + delta
        a = old_from + 1 if old_count else old_from
        b = new_from + 1 if new_count else new_from
        out.append(f"@@ -{a},{old_count} +{b},{new_count} @@\n")
        out += body
        delta += group_delta
    return "".join(out)


def syntax_error(name: str, text: str) -> str | None:
    """Why ``text`` does not parse as the language of ``name``'s suffix, or ``None``."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    try:
        if suffix in ("py", "pyi"):
            ast.parse(text, filename=name)
        elif suffix == "json":
            json.loads(text)
        elif suffix == "toml":
            return _toml_error(text)
        elif suffix in ("yaml", "yml"):
            return _yaml_error(text)
        else:
            return None
    except SyntaxError as exc:
        return describe(exc, text)
    except json.JSONDecodeError as exc:
        return f"JSON line {exc.lineno} column {exc.colno}: {exc.msg}"
    return None


def _toml_error(text: str) -> str | None:
    import tomllib  # loaded when a TOML file is first patched

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"TOML: {exc}"
    return None


def _yaml_error(text: str) -> str | None:
    import yaml  # loaded when a YAML file is first patched

    try:
        for _ in yaml.safe_load_all(text):
            pass
    except yaml.YAMLError as exc:
        return "YAML: " + " ".join(str(exc).split())
    return None
