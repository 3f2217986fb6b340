"""``vis.log`` to the day's log folder and ``vis.notify`` as a notification in the session."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from vis_core.extension.acting import current_extension
from vis_core.extension.runtime import current_runtime
from vis_core.model.notify import LogLevel, NotifyKind
from vis_core.paths import VisPaths

LOG_LEVELS = tuple(LogLevel)
NOTIFY_KINDS = tuple(NotifyKind)
LOG_FILE_NAME = "vis.log"  # Vis's own log lines go here too (vis_core.settings.logfile)
_write_lock = threading.Lock()
# Lines are written to the file directly; the logger only echoes them for debugging and does
# not propagate, so the log file's own handler does not write them twice.
logger = logging.getLogger("vis.extensions")
logger.propagate = False


def log_file(paths: VisPaths | None = None, when: float | None = None) -> Path:
    """Today's log file, ``logs/YYYY-MM-DD/vis.log`` (local date)."""
    day = time.strftime("%Y-%m-%d", time.localtime(when))
    return (paths or VisPaths.from_env()).logs_for_day(day) / LOG_FILE_NAME


def write_log(level: str, message: str, *, source: str, detail: str = "") -> Path:
    """Append one line for ``source`` (and an indented ``detail``, e.g. a traceback) to
    today's log file and return the file; saved secrets are written as ``[REDACTED]``."""
    from vis_core.system.redaction import redact_log_text
    from vis_core.terminal import terminal_text

    now = time.time()
    path = log_file(when=now)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
    # as text a terminal shows as written (``cat vis.log``): no control sequence
    text = terminal_text(redact_log_text(" ".join(str(message).splitlines()) or "(empty)"))
    line = f"{stamp} {level.upper():5} [{terminal_text(source)}] {text}\n"
    if detail.strip():
        rows = terminal_text(redact_log_text(detail)).rstrip("\n").splitlines()
        line += "".join(f"    {row}\n" for row in rows)
    with _write_lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as stream:
            stream.write(line)
    logger.debug("[%s] %s: %s", source, level, text)
    return path


def log(level: str, msg: str) -> None:
    """Write ``msg`` at ``level`` (trace, debug, info, warn, error) to the Vis log."""
    if level not in LOG_LEVELS:
        raise ValueError(f"vis.log level {level!r} is unknown; use one of {', '.join(LOG_LEVELS)}")
    if not isinstance(msg, str):
        raise TypeError(f"vis.log message must be text, got {type(msg).__name__}")
    source = current_extension() or "vis"
    current_runtime().log(level, msg, source)


def notify(text: str, kind: NotifyKind | str = NotifyKind.INFO) -> None:
    """Show ``text`` as a notification (info, success, warn, error) in the active session.

    Outside a session (loading, or outside Vis) the text goes to the log instead.
    """
    if kind not in NOTIFY_KINDS:
        raise ValueError(
            f"vis.notify kind {kind!r} is unknown; use one of {', '.join(NOTIFY_KINDS)}"
        )
    if not isinstance(text, str) or not text.strip():
        raise ValueError("vis.notify needs nonblank text")
    kind = NotifyKind(kind)
    runtime = current_runtime()
    if not runtime.notify(text, kind.value):  # no session shows it: the log keeps it
        level = LogLevel.INFO if kind is NotifyKind.SUCCESS else LogLevel(kind.value)
        runtime.log(level, f"notification: {text}", current_extension() or "vis")
