"""Bounded printed output: keep the tail, say how much was cut."""

from __future__ import annotations

from collections import deque


def cut_note(count: int) -> str:
    """The line that replaces ``count`` characters cut from the start of an output."""
    return f"[… {count:,} earlier characters cut]\n"


def keep_tail(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its tail after a cut note."""
    if len(text) <= limit:
        return text
    return cut_note(len(text) - limit) + text[-limit:]


class TailBuffer:
    """Collects text and keeps at most ``limit`` characters of its end (plus the cut count)."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._parts: deque[str] = deque()
        self._size = 0
        self._cut = 0

    def add(self, text: str) -> None:
        if not text:
            return
        self._parts.append(text)
        self._size += len(text)
        while self._parts and self._size - len(self._parts[0]) >= self.limit:
            dropped = self._parts.popleft()
            self._size -= len(dropped)
            self._cut += len(dropped)

    def text(self) -> str:
        joined = "".join(self._parts)
        cut = self._cut
        if len(joined) > self.limit:
            cut += len(joined) - self.limit
            joined = joined[-self.limit :]
        return cut_note(cut) + joined if cut else joined
