"""One-line fields: a character that would end the line, or hide in it, shows as its escape."""

from __future__ import annotations

# Every character str.splitlines() breaks at (a terminal, a log viewer or a browser starts a
# new line there), the tab, and the zero-width spaces (a name holding one looks like another).
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ZERO_WIDTH = "\u200b\u2060\ufeff"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
LINE_TABLE: dict[int, str] = {
    ord(c): _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
    for c in (*_BREAKS, "\t", *_ZERO_WIDTH)
}
_KEEP_TABS = {code: shown for code, shown in LINE_TABLE.items() if code != ord("\t")}


def on_one_line(text: str, *, tabs: bool = False) -> str:
    """``text`` for a one-line field (a file name, an Activity's summary): each line break,
    zero-width space and tab (unless ``tabs``: a printed line's columns) shown as its escape,
    ``\\n``, ``\\u2028``, ``\\t``."""
    return text.translate(_KEEP_TABS if tabs else LINE_TABLE)
