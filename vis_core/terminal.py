"""Text for a terminal: control characters are shown escaped, never interpreted.

Model text, tool output, file names and extension text are untrusted: an ESC sequence in them
could write the clipboard (OSC 52), retitle the window, clear the screen or plant a hyperlink.
"""

from __future__ import annotations

# C0 controls but tab and newline, DEL, and the C1 controls (8-bit CSI, OSC …) become visible.
CONTROL_TABLE: dict[int, str] = {
    code: f"\\x{code:02x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if code not in (0x09, 0x0A)
}
CONTROL_TABLE[0x0D] = ""  # a carriage return would let text overwrite its own line
# JSON escapes C0 itself; C1 characters are valid in JSON strings, so they are escaped here.
_JSON_C1 = {code: f"\\u{code:04x}" for code in range(0x80, 0xA0)}


def terminal_text(text: str) -> str:
    """``text`` safe to write to a terminal: every control character but tab and newline is
    shown as ``\\xNN`` (carriage returns are dropped), a lone surrogate (a ``\\ud800``
    escape in a server's JSON) as ``\\ud800``: writing it would fail, and lose the rest."""
    text = text.translate(CONTROL_TABLE)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def terminal_json(line: str) -> str:
    """A JSON text safe for a terminal: C1 controls inside its strings become ``\\u00NN``."""
    return line.translate(_JSON_C1)
