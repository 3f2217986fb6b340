"""Output of an extension's child processes that the extension does not read goes to its log.

In an extension worker, ``subprocess`` and ``os.system`` children started by extension code
get a pipe instead of the worker's own stdout/stderr for each stream the extension leaves
alone; a thread drains it (up to 8 MiB a stream) into the extension's log, line by line.
"""

from __future__ import annotations

import os
import subprocess
import threading
from typing import Any, BinaryIO

from vis_core.extension.acting import current_extension

STREAM_LIMIT = 8 * 1024 * 1024  # bytes of one stream logged; the rest is drained unlogged
LINE_LIMIT = 4000  # characters of one logged line
JOIN_AFTER_EXIT = 5.0  # seconds wait() gives the drains once the child ended
_LEVELS = {"stdout": "info", "stderr": "warn"}


def _log(level: str, message: str, source: str) -> None:
    from vis_core.extension.runtime import current_runtime

    try:
        current_runtime().log(level, message, source)
    except Exception:  # the host is gone: nowhere left to log
        pass


def _drain(stream: BinaryIO, name: str, source: str, command: str) -> None:
    logged = 0
    with stream:
        for raw in stream:
            logged += len(raw)
            if logged > STREAM_LIMIT:
                continue  # keep reading: a child must never block on a full pipe
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line:
                _log(_LEVELS[name], f"{command} {name}: {line[:LINE_LIMIT]}", source)
    if logged > STREAM_LIMIT:
        _log("warn", f"{command} {name}: {logged - STREAM_LIMIT:,} more bytes not logged", source)


def _name(args: Any) -> str:
    first = args if isinstance(args, str | bytes | os.PathLike) else next(iter(args), "")
    text = os.fsdecode(first) if not isinstance(first, str) else first
    return os.path.basename(text.split()[0]) if text.split() else "child"


class CapturingPopen(subprocess.Popen):  # type: ignore[type-arg]
    """``subprocess.Popen`` that logs the streams extension code leaves unread."""

    def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
        source = current_extension()
        drains: list[tuple[int, str]] = []
        if source is not None and not rest:  # positional bufsize… callers keep their streams
            for name in ("stdout", "stderr"):
                if kwargs.get(name) is None:
                    read, write = os.pipe()
                    kwargs[name] = write
                    drains.append((read, name))
        self._vis_drains: list[threading.Thread] = []
        try:
            super().__init__(args, *rest, **kwargs)
        except BaseException:
            for read, name in drains:
                os.close(read)
                os.close(kwargs[name])
            raise
        command = _name(args)
        for read, name in drains:
            os.close(kwargs[name])  # the child holds the write end now
            thread = threading.Thread(
                target=_drain,
                args=(os.fdopen(read, "rb"), name, source, command),
                name="vis-child-output",
                daemon=True,
            )
            thread.start()
            self._vis_drains.append(thread)

    def wait(self, timeout: float | None = None) -> int:
        code = super().wait(timeout)
        for thread in self._vis_drains:  # the child ended: its last lines are logged now
            thread.join(JOIN_AFTER_EXIT)
        return code


def _system(command: str | bytes) -> int:
    """``os.system`` whose output, when extension code runs it, goes to the extension's log."""
    if current_extension() is None:
        return _original_system(command)
    code = CapturingPopen(command, shell=True).wait()
    return code << 8 if code >= 0 else -code  # the wait status os.system returns


_original_system = os.system


def capture_child_output() -> None:
    """Install the capture in this process (an extension worker), once."""
    subprocess.Popen = CapturingPopen  # type: ignore[misc]
    os.system = _system
