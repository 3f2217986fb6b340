"""The day's log file, ``logs/YYYY-MM-DD/vis.log``, written with secrets redacted."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from vis_core.extension.logs import log_file
from vis_core.paths import PRIVATE_FILE_MODE, VisPaths, private_dir
from vis_core.system import held_logs, redaction
from vis_core.system.redaction import RedactingFilter, Redactor
from vis_core.terminal import terminal_text

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _TextFormatter(logging.Formatter):
    """Each record as text a terminal shows as written (``cat vis.log``): what a record
    quotes of a server, a file name or the model's output keeps no control sequence."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record))


class _DayFileHandler(logging.FileHandler):
    """A file handler that recreates its folder when it (re)opens the file."""

    def _open(self):  # type: ignore[no-untyped-def]
        path = Path(self.baseFilename)
        private_dir(path.parent)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE))
        return super()._open()


_handler: logging.FileHandler | None = None


def attach_log_file(paths: VisPaths, redactor: Redactor) -> Path:
    """Send warnings and errors of every logger to today's log file, redacted by ``redactor``.

    One handler per process: attaching again re-points it (new file or new redactor).
    """
    global _handler
    path = log_file(paths)
    attached = redaction.log_filter
    if _handler is not None and Path(_handler.baseFilename) == path and attached is not None:
        attached.redactor = redactor
        return path
    detach_log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = _DayFileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_TextFormatter(_FORMAT))
    redaction.log_filter = RedactingFilter(redactor)
    handler.addFilter(redaction.log_filter)
    logging.getLogger().addHandler(handler)
    _handler = handler
    held_logs.release(handler)
    return path


def detach_log_file(redactor: Redactor | None = None) -> None:
    """Remove the handler (only if it redacts with ``redactor``, when one is given)."""
    global _handler
    attached = redaction.log_filter
    if redactor is not None and (attached is None or attached.redactor is not redactor):
        return
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
    _handler, redaction.log_filter = None, None
