"""``print()`` from extension code goes to the extension's log, never to Vis's own output."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from vis_core.extension.acting import current_extension
from vis_core.extension.declarations import _loading
from vis_core.terminal import PassingStream


def _printing_extension(main_is_vis: bool = True) -> str | None:
    """The extension whose code writes now: one being loaded, or one called in a worker thread.

    Vis's own loop runs in the main thread; events it writes there (``vis run --json``) are
    never taken for extension output, even when they carry an extension call's context
    (``main_is_vis``; in an extension worker the main thread's loop runs extension calls).
    """
    registration = _loading.get()
    if registration is not None:
        declaration = registration.declaration
        return declaration.name if declaration is not None else registration.path.stem
    if main_is_vis and threading.current_thread() is threading.main_thread():
        return None
    return current_extension()


LogSink = Callable[[str, str, str], object]  # (level, message, source)


def to_log(level: str, message: str, source: str) -> None:
    """The default sink: the extension's log file (its module, with the paths of Vis's
    folders, loaded at the first line: a session's worker hands its lines to the host)."""
    from vis_core.extension.logs import write_log

    write_log(level, message, source=source)


class ExtensionOutput(PassingStream):
    """A stand-in for ``sys.stdout``/``sys.stderr``: extension lines go to the log (through
    ``sink``: an extension worker hands them to its host)."""

    def __init__(
        self, target: TextIO, level: str, sink: LogSink = to_log, *, main_is_vis: bool = True
    ) -> None:
        self.target = target
        self._main_is_vis = main_is_vis
        self._level = level
        self._sink = sink
        self._partial: dict[tuple[int, str], str] = {}
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        source = _printing_extension(self._main_is_vis)
        if source is None:
            return self.target.write(text)
        key = (threading.get_ident(), source)
        with self._lock:
            pending = self._partial.pop(key, "") + text
            *lines, rest = pending.split("\n")
            if rest:
                self._partial[key] = rest
        for line in lines:
            self._sink(self._level, f"print: {line}", source)
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.target.fileno()

    def isatty(self) -> bool:
        return self.target.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


def route_extension_output() -> None:
    """Put :class:`ExtensionOutput` in front of ``sys.stdout`` and ``sys.stderr`` (once)."""
    if not isinstance(sys.stdout, ExtensionOutput):
        sys.stdout = ExtensionOutput(sys.stdout, "info")
    if not isinstance(sys.stderr, ExtensionOutput):
        sys.stderr = ExtensionOutput(sys.stderr, "warn")
