"""Fast Python syntax checks for patches: re-parse only the top-level statements around edits."""

from __future__ import annotations

import ast
import hashlib
from bisect import bisect_right
from collections import OrderedDict

CACHE_SIZE = 256
_starts: OrderedDict[bytes, tuple[int, ...]] = OrderedDict()


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", errors="surrogatepass"), digest_size=16).digest()


def _remember(key: bytes, starts: tuple[int, ...]) -> None:
    _starts[key] = starts
    _starts.move_to_end(key)
    while len(_starts) > CACHE_SIZE:
        _starts.popitem(last=False)


def statement_starts(tree: ast.Module, offset: int = 0) -> tuple[int, ...]:
    """0-based first lines of the top-level statements (decorators included)."""
    starts = []
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        starts.append(first - 1 + offset)
    return tuple(starts)


def describe(exc: SyntaxError, source: str, offset: int = 0) -> str:
    """How a refusal names ``exc``, raised parsing ``source`` (``offset``: lines of the file
    above it). The line quoted is ``source``'s: CPython reads ``exc.text`` from a file of the
    parsed name when one exists, the file on disk with the old line."""
    lineno = exc.lineno or 0
    where = f"line {lineno + offset}" if lineno else "somewhere"
    rows = source.split("\n")
    text = rows[lineno - 1].strip() if 0 < lineno <= len(rows) else ""
    snippet = f": {text!r}" if text else ""
    return f"Python {where}: {exc.msg}{snippet}"


# From this many lines, a patch whose touched statements parse on their own is accepted without
# parsing the whole file once (a 100,000-line file takes seconds); anything unsure or failing
# takes the exact path below, so an answer never differs from a full parse.
LOCAL_CHECK_LINES = 5_000
_CLAUSES = ("else", "elif", "except", "finally", "case")
_OPENS_NEXT_LINE = ("\\", ",", "(", "[", "{", ":", "=", "+", "-", "*", "/", "|", "&", "%")


def _is_statement_start(line: str) -> bool:
    """A line at column 0 that can only begin a top-level statement (outside strings and
    brackets, which the callers rule out separately)."""
    if not line or line[0] in " \t\r\n#)]}@":
        return False
    word = line.split(None, 1)[0].rstrip(":")
    return word not in _CLAUSES


def _boundary(lines: list[str], index: int, step: int, count: int) -> int | None:
    """The ``count``-th statement start from ``index`` in direction ``step`` (``None``: the
    file's edge)."""
    found = 0
    while 0 <= index < len(lines):
        if _is_statement_start(lines[index]):
            found += 1
            if found == count:
                return index
        index += step
    return None


def _ends_a_statement(lines: list[str], start: int) -> bool:
    """The last code line above ``start`` does not carry on into it."""
    for line in reversed(lines[max(0, start - 50) : start]):
        code = line.split("#", 1)[0].rstrip()
        if code:
            return not code.endswith(_OPENS_NEXT_LINE)
    return start < 50


def _old_region(
    after_lines: list[str], hunks: list[tuple[int, list[str], list[str]]], start: int, end: int
) -> str:
    """Old lines ``start:end`` (old numbering), rebuilt from the new lines and the hunks."""
    pieces: list[str] = []
    cursor, shift = start, 0
    for lo, old, new in hunks:
        pieces += after_lines[cursor + shift : lo + shift]
        pieces += old
        shift += len(new) - len(old)
        cursor = lo + len(old)
    pieces += after_lines[cursor + shift : end + shift]
    return "".join(pieces)


def _local_check_passes(
    name: str, before: str, after_lines: list[str], hunks: list[tuple[int, list[str], list[str]]]
) -> bool:
    """Whether the statements a patch touched parse, old and new, where they provably stand
    alone: the region is bounded by top-level statement starts (one more on each side for
    ``else``/``except``/decorators), outside any triple-quoted string and bracket."""
    first = min(lo for lo, _, _ in hunks)
    last = max(lo + len(old) for lo, old, _ in hunks)
    delta = sum(len(new) - len(old) for _, old, new in hunks)
    # above the first hunk old and new lines are the same; below the last, shifted by delta
    start = _boundary(after_lines, first - 1, -1, 2)
    end = _boundary(after_lines, last + delta, 1, 2)
    start = 0 if start is None else start
    end = len(after_lines) - delta if end is None else end - delta
    offset = sum(map(len, after_lines[:start]))  # the lines above are the same in ``before``
    for quote in ('"""', "'''"):
        if before.count(quote, 0, offset) % 2:
            return False  # maybe inside a string
    if start and not _ends_a_statement(after_lines, start):
        return False
    old_region = _old_region(after_lines, hunks, start, end)
    new_region = "".join(after_lines[start : end + delta])
    for region in (old_region, new_region):
        for quote in ('"""', "'''"):
            if region.count(quote) % 2:
                return False
        try:
            ast.parse(region, filename=name)
        except SyntaxError:
            return False
    return True


def check_python(
    name: str,
    before: str,
    after_lines: list[str],
    hunks: list[tuple[int, list[str], list[str]]],
    *,
    created: bool,
    local_check_lines: int = LOCAL_CHECK_LINES,
) -> str | None:
    """Why the patched file does not parse, or ``None``; a file that did not parse before passes.

    The top-level statement starts of each parsed version are cached, so a patch parses only
    the statements it touched plus one neighbour on each side (enough for ``else``/``except``
    clauses and decorators), not the whole file.
    """
    if not created and hunks and len(after_lines) >= local_check_lines:
        if _local_check_passes(name, before, after_lines, hunks):
            return None  # the touched statements parse, and nothing around them can change that
    after = "".join(after_lines)
    if created:
        try:
            tree = ast.parse(after, filename=name)
        except SyntaxError as exc:
            return describe(exc, after)
        _remember(_key(after), statement_starts(tree))
        return None
    old_key = _key(before)
    starts = _starts.get(old_key)
    if starts is None:
        try:
            starts = statement_starts(ast.parse(before, filename=name))
        except SyntaxError:
            return None  # it was already broken: editing it step by step is allowed
        _remember(old_key, starts)
    if not hunks:
        return None
    first = min(lo for lo, _, _ in hunks)
    last = max(lo + len(old) for lo, old, _ in hunks)
    old_count = before.count("\n") + (1 if before and not before.endswith("\n") else 0)
    k = bisect_right(starts, first) - 1
    start = starts[k - 1] if k >= 1 else 0
    j = bisect_right(starts, max(last - 1, first))
    end = starts[j + 1] if j + 1 < len(starts) else old_count
    delta = sum(len(new) - len(old) for _, old, new in hunks)
    region = "".join(after_lines[start : end + delta])
    try:
        tree = ast.parse(region, filename=name)
    except SyntaxError as exc:
        return describe(exc, region, start)
    new_starts = (
        *(s for s in starts if s < start),
        *statement_starts(tree, start),
        *(s + delta for s in starts if s >= end),
    )
    _remember(_key(after), new_starts)
    return None
