"""Text for a terminal: control characters are shown escaped, never interpreted.

Model text, tool output, file names and extension text are untrusted: an ESC sequence in them
could write the clipboard (OSC 52), retitle the window, clear the screen or plant a hyperlink,
a bidi control (U+202E, right-to-left override) could make ``evil.py`` read as another name,
and tag characters (U+E0020…) could hide text no one sees. The CLI commands write through
:class:`TerminalWriter`, so what Vis did not write itself reaches the terminal as visible text.
"""

from __future__ import annotations

import functools
import io
import re
import sys
from collections.abc import Callable
from typing import Any, TextIO

from vis_core.model.invisible import HIDDEN_IN_PROSE, show_stray_selectors

# C0 controls but tab and newline, DEL, and the C1 controls (8-bit CSI, OSC …) become visible.
_C0_C1 = (*range(0x20), 0x7F, *range(0x80, 0xA0))


@functools.cache
def _control_table() -> dict[int, str]:
    """What :func:`terminal_text` changes in every text: controls to ``\\xNN`` (carriage
    returns dropped). Built at the first use: a worker imports this module for
    :class:`PassingStream` alone."""
    table = {code: f"\\x{code:02x}" for code in _C0_C1 if code not in (0x09, 0x0A)}
    table[0x0D] = ""  # a carriage return would let text overwrite its own line
    return table


def _json_escape(code: int) -> str:
    """``code`` as a JSON escape: a character past U+FFFF as its UTF-16 surrogate pair."""
    units = chr(code).encode("utf-16-be")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def _character_class(codes: set[int]) -> str:
    """A regular expression's class of ``codes``, as ranges of consecutive ones: the 4,096
    tag characters each listed made compiling it cost ~6 ms at every import."""
    runs: list[list[int]] = []
    for code in sorted(codes):
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "[" + "".join(f"{chr(a)}-{chr(b)}" if a < b else chr(a) for a, b in runs) + "]"


@functools.cache
def _hidden() -> re.Pattern[str]:
    """Each bidi control and character that draws as nothing (:data:`HIDDEN_IN_PROSE`: not the
    joiners and variation selectors emoji and some scripts need), all outside ASCII: compiled
    for the first text that is not ASCII, not at every start (a table of its ~4,000 names cost
    ~1 ms of a ``vis run`` that printed only ASCII)."""
    return re.compile(_character_class(set(HIDDEN_IN_PROSE)))


@functools.cache
def _json_unsafe() -> re.Pattern[str]:
    """Each character :func:`terminal_json` changes: JSON escapes C0 itself; DEL, C1 and the
    hidden characters are valid in JSON strings, so they are escaped here, as JSON escapes.
    Compiled at the first use (``--json``, an export), not at import."""
    return re.compile(_character_class({0x7F, *range(0x80, 0xA0), *HIDDEN_IN_PROSE}))


def terminal_text(text: str) -> str:
    """``text`` safe to write to a terminal: every control character but tab and newline is
    shown as ``\\xNN`` (carriage returns are dropped), a bidi control or a character that
    draws as nothing as ``<U+202E>``, ``<U+E0020>`` (:data:`HIDDEN_IN_PROSE`), a lone
    surrogate (a ``\\ud800`` escape in a server's JSON) as ``\\ud800``: writing it would
    fail, and lose the rest."""
    text = text.translate(_control_table())
    if text.isascii():
        return text
    text = _hidden().sub(lambda found: _by_name(found.group()), text)
    text = show_stray_selectors(text, _by_name)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def shell_command(*words: str) -> str:
    """A command line a person can paste into a POSIX shell: each word quoted as the shell
    reads it back (a request with quotes, a space or ``$`` stays one word), then made safe for
    the terminal as :func:`terminal_text` does."""
    import shlex  # only when a command is shown: not at every import

    return terminal_text(shlex.join(words))


def terminal_json(line: str) -> str:
    """A JSON text safe for a terminal: C1 controls, bidi controls and hidden characters
    inside its strings become ``\\u00NN`` escapes (the same JSON value), and each variation
    selector that selects nothing (:data:`~vis_core.model.invisible.STRAY_SELECTOR`); only the
    few places that need it are changed."""
    line = _json_unsafe().sub(lambda found: _json_escape(ord(found.group())), line)
    return show_stray_selectors(line, lambda character: _json_escape(ord(character)))


def _by_name(character: str) -> str:
    return f"<U+{ord(character):04X}>"


class TerminalWriter:
    """A text stream that writes everything through :func:`terminal_text` (for commands that
    write no control sequence of their own), and through ``clean`` (the running Vis's secret
    redaction); ``raw`` is the stream underneath."""

    def __init__(self, raw: TextIO, clean: Callable[[str], str] | None = None) -> None:
        self.raw = raw
        self.clean = clean

    def write(self, text: str) -> int:
        shown = terminal_text(text)
        self.raw.write(self.clean(shown) if self.clean is not None else shown)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno …
        return getattr(self.raw, name)


def guard_output(*, stdout: bool = True, clean: Callable[[str], str] | None = None) -> None:
    """Write ``sys.stderr`` (and ``sys.stdout``, unless told not to) through
    :class:`TerminalWriter` from now on (prints, log warnings, tracebacks)."""
    if stdout and not isinstance(sys.stdout, TerminalWriter):
        sys.stdout = TerminalWriter(sys.stdout, clean)  # type: ignore[assignment]
    if not isinstance(sys.stderr, TerminalWriter):
        sys.stderr = TerminalWriter(sys.stderr, clean)  # type: ignore[assignment]


class PassingStream(io.TextIOBase):
    """A stand-in in front of ``sys.stdout``/``sys.stderr`` that passes Vis's own writes on to
    ``target`` unchanged (the extension host's, which sends extension prints to their log)."""

    target: TextIO


def raw_stream(stream: Any) -> TextIO:
    """The stream under a :class:`TerminalWriter` (for Rich, which escapes what it prints
    itself and writes its own colours), also with a :class:`PassingStream` in front of it: Rich
    writing through the writer would have its colours shown as ``\\x1b[31m``."""
    while isinstance(stream, PassingStream):
        stream = stream.target
    return stream.raw if isinstance(stream, TerminalWriter) else stream
