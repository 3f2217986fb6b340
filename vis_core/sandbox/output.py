"""Bounded printed output: the last 2,000 lines / 50 KB, a note of the cut, the whole saved."""

from __future__ import annotations

from collections import deque
from pathlib import Path

# the built-in tools' limits (vis_core.text_limits), repeated so the child stays light
MAX_BYTES = 50 * 1024
MAX_LINES = 2000

#: printed characters a block keeps in memory (and saves when its output is cut)
KEPT_CHARS = 8 * 1024 * 1024


def cut_note(count: int) -> str:
    """The line that replaces ``count`` characters cut from the start of an output."""
    return f"[… {count:,} earlier characters cut]\n"


def keep_tail(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its tail after a cut note."""
    if len(text) <= limit:
        return text
    return cut_note(len(text) - limit) + text[-limit:]


class TailBuffer:
    """Collects a block's printed text, keeping the last ``kept`` characters in memory.

    :meth:`text` is the model's view: whole lines from the end within ``max_lines`` and
    ``limit`` bytes, after a note of what was cut and of the file the full output went to.
    """

    def __init__(
        self,
        limit: int = MAX_BYTES,
        *,
        max_lines: int = MAX_LINES,
        save_dir: Path | None = None,
        kept: int = KEPT_CHARS,
    ) -> None:
        self.limit = max(1, limit)
        self.max_lines = max(1, max_lines)
        self.save_dir = save_dir
        self.kept = max(self.limit, kept)
        self._parts: deque[str] = deque()
        self._size = 0
        self._cut = 0
        self._newlines = 0
        self._bytes = 0
        self._last = ""
        self.total = 0  # characters added so far: a mark for :meth:`since`

    def add(self, text: str) -> None:
        if not text:
            return
        self._newlines += text.count("\n")
        self._bytes += len(text.encode("utf-8", errors="surrogatepass"))
        self._last = text[-1]
        self.total += len(text)
        self._parts.append(text)
        self._size += len(text)
        while self._parts and self._size - len(self._parts[0]) >= self.kept:
            dropped = self._parts.popleft()
            self._size -= len(dropped)
            self._cut += len(dropped)

    def _end(self, chars: int, lines: int | None = None) -> str:
        """The last ``chars`` characters added, read from the newest parts back (no further
        than ``lines`` line breaks back, when given)."""
        found: list[str] = []
        size = newlines = 0
        for part in reversed(self._parts):
            found.append(part)
            size += len(part)
            if lines is not None:
                newlines += part.count("\n")
            if size >= chars or (lines is not None and newlines > lines):
                break
        return "".join(reversed(found))[-chars:]

    def since(self, mark: int, most: int) -> str:
        """What was added after the first ``mark`` characters (:attr:`total` then): its last
        ``most`` characters, after a note of the cut when there was more."""
        new = self.total - mark
        if new <= 0:
            return ""
        text = self._end(min(new, most))
        return text if len(text) == new else cut_note(new - len(text)) + text

    def tail(self, lines: int, chars: int = 4096) -> str:
        """The last ``lines`` lines printed so far (the one still being printed counts),
        from at most the last ``chars`` characters: what a running block shows."""
        from vis_core.model.block import drawn_line  # the host's; the child stays light

        text = self._end(chars, lines).rstrip("\n")
        shown = [drawn_line(line) for line in text.split("\n")[-lines:]]
        return "\n".join(shown) if text else ""

    def text(self) -> str:
        from vis_core.system.truncate import save_full_output
        from vis_core.text_limits import Keep, truncate, truncation_note

        joined = "".join(self._parts)
        cut = truncate(joined, Keep.TAIL, max_lines=self.max_lines, max_bytes=self.limit)
        if not cut.truncated and not self._cut:
            return joined
        total_lines = self._newlines + (0 if self._last in ("", "\n") else 1)
        lost = cut_note(self._cut) if self._cut else ""
        where = " The full output was not saved."
        if self.save_dir is not None:
            try:
                saved = save_full_output(lost + joined, self.save_dir, "python_execution")
            except OSError as exc:
                where = f" Saving the full output failed: {exc}"
            else:
                early = " (its first part was too long to keep)" if self._cut else ""
                where = f" Full output saved to: {saved}{early}"
        note = truncation_note(
            cut, Keep.TAIL, where, total_lines=total_lines, total_bytes=self._bytes
        )
        return f"{note}\n\n{cut.text}"
