"""Open a web address in the person's graphical browser, by a program found outside the workspace.

Python's ``webbrowser`` (which Textual's links use) looks ``xdg-settings``, ``xdg-open`` and
browsers up by name on ``PATH`` and runs them by name, so a ``PATH`` holding ``.`` or an empty
entry ran a checkout's ``./xdg-open``. Here every program is an absolute path from
:func:`~vis_core.system.programs.host_program`; a terminal browser starts only when
``$BROWSER`` names one.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from vis_core.system.programs import host_program

# what opens an address on a Linux desktop, in the order Python's webbrowser tries them
OPENERS: tuple[tuple[str, ...], ...] = (("xdg-open",), ("gio", "open", "--"), ("x-www-browser",))


def _browser_variable(
    url: str, roots: Iterable[Path], environ: Mapping[str, str]
) -> list[str] | None:
    """``$BROWSER`` (the person's choice; its first entry) for ``url``: ``%s`` replaced by the
    address, else the address appended; a bare program name found outside ``roots``."""
    entry = environ.get("BROWSER", "").split(os.pathsep)[0].strip()
    try:
        words = shlex.split(entry)
    except ValueError:  # an unclosed quote: not a command
        return None
    if not words:
        return None
    if "/" not in words[0]:
        found = host_program(words[0], roots)
        if found is None:
            return None
        words[0] = found
    if "%s" in entry:
        return [word.replace("%s", url) for word in words]
    return [*words, url]


def browser_command(
    url: str,
    roots: Iterable[Path],
    environ: Mapping[str, str] = os.environ,
) -> list[str] | None:
    """The command that opens ``url`` in a graphical browser, its program an absolute path in
    a ``PATH`` folder outside ``roots`` (the workspace); None when there is none (no display,
    as over SSH, or no opener installed)."""
    roots = tuple(roots)
    if sys.platform == "darwin":
        opener = host_program("open", roots)
        return [opener, url] if opener else None
    if not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        return None
    chosen = _browser_variable(url, roots, environ)
    if chosen is not None:
        return chosen
    for name, *args in OPENERS:
        found = host_program(name, roots)
        if found is not None:
            return [found, *args, url]
    return None


def open_browser(url: str, roots: Iterable[Path]) -> bool:
    """Open ``url`` in the system browser (``$BROWSER``, else the desktop's opener); False
    when there is none or it could not start."""
    command = browser_command(url, roots)
    if command is None:
        return False
    try:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True
