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


def _describe(exc: SyntaxError, offset: int) -> str:
    line = (exc.lineno or 0) + offset
    where = f"line {line}" if exc.lineno else "somewhere"
    snippet = f": {exc.text.strip()!r}" if exc.text and exc.text.strip() else ""
    return f"Python {where}: {exc.msg}{snippet}"


def check_python(
    name: str,
    before: str,
    after_lines: list[str],
    hunks: list[tuple[int, list[str], list[str]]],
    *,
    created: bool,
) -> str | None:
    """Why the patched file does not parse, or ``None``; a file that did not parse before passes.

    The top-level statement starts of each parsed version are cached, so a patch parses only
    the statements it touched plus one neighbour on each side (enough for ``else``/``except``
    clauses and decorators), not the whole file.
    """
    after = "".join(after_lines)
    if created:
        try:
            tree = ast.parse(after, filename=name)
        except SyntaxError as exc:
            return _describe(exc, 0)
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
        return _describe(exc, start)
    new_starts = (
        *(s for s in starts if s < start),
        *statement_starts(tree, start),
        *(s + delta for s in starts if s >= end),
    )
    _remember(_key(after), new_starts)
    return None
