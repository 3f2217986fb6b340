"""One-line fields: a character that would end the line, or hide in it, shows as its escape."""

from __future__ import annotations

import functools

from vis_core.model.invisible import INVISIBLE_IN_NAMES

# Every character str.splitlines() breaks at (a terminal, a log viewer or a browser starts a
# new line there), the tab, and every character that draws as nothing in a name (one holding
# it looks like another: ``setup\u200c.py`` beside ``setup.py``, ``a\u2800.txt``).
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def is_one_line(text: str) -> bool:
    """Whether ``text`` holds none of the characters ``str.splitlines()`` breaks at: a value
    declared as one line (a headline, a label) ends no line in a terminal, a log or a page."""
    return not any(char in _BREAKS for char in text)


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@functools.cache
def _tables() -> tuple[dict[int, str], dict[int, str]]:
    """The translation tables, with the tab and without it: built when a field is first shown,
    not at import (~4,000 escapes, ~1.5 ms of a start that may show none)."""
    line: dict[int, str] = {ord(c): _NAMED.get(c) or _escape(ord(c)) for c in (*_BREAKS, "\t")} | {
        code: _escape(code) for code in INVISIBLE_IN_NAMES
    }
    return line, {code: shown for code, shown in line.items() if code != ord("\t")}


def on_one_line(text: str, *, tabs: bool = False) -> str:
    """``text`` for a one-line field (a file name, an Activity's summary): each line break,
    invisible character (a zero-width joiner, a tag character, a bidi control …) and tab
    (unless ``tabs``: a printed line's columns) shown as its escape, ``\\n``, ``\\u2028``,
    ``\\U000e0020``, ``\\t``."""
    line, keep_tabs = _tables()
    return text.translate(keep_tabs if tabs else line)
