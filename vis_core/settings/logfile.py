"""The day's log file, ``logs/YYYY-MM-DD/vis.log``, written with secrets redacted."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from vis_core.paths import PRIVATE_FILE_MODE, VisPaths, private_dir
from vis_core.settings.redact import RedactingFilter, Redactor, environment_secrets
from vis_core.settings.storage import SecretsFile

LOG_NAME = "vis.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _DayFileHandler(logging.FileHandler):
    """A file handler that recreates its folder when it (re)opens the file."""

    def _open(self):  # type: ignore[no-untyped-def]
        path = Path(self.baseFilename)
        private_dir(path.parent)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE))
        return super()._open()


_handler: logging.FileHandler | None = None
_filter: RedactingFilter | None = None


def log_file(paths: VisPaths, day: str | None = None) -> Path:
    return paths.logs_for_day(day or time.strftime("%Y-%m-%d")) / LOG_NAME


def attach_log_file(paths: VisPaths, redactor: Redactor) -> Path:
    """Send warnings and errors of every logger to today's log file, redacted by ``redactor``.

    One handler per process: attaching again re-points it (new file or new redactor).
    """
    global _handler, _filter
    path = log_file(paths)
    if _handler is not None and Path(_handler.baseFilename) == path and _filter is not None:
        _filter.redactor = redactor
        return path
    detach_log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = _DayFileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(_FORMAT))
    _filter = RedactingFilter(redactor)
    handler.addFilter(_filter)
    logging.getLogger().addHandler(handler)
    _handler = handler
    return path


def detach_log_file(redactor: Redactor | None = None) -> None:
    """Remove the handler (only if it redacts with ``redactor``, when one is given)."""
    global _handler, _filter
    if redactor is not None and (_filter is None or _filter.redactor is not redactor):
        return
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
    _handler, _filter = None, None


class _SavedSecrets:
    """The secrets saved on this computer, re-read when the secrets file changes.

    Covers log lines written before a Host attaches its redactor (extensions loading, code
    outside Vis) and secrets another process (``vis settings set``) saved meanwhile."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[object, ...] | None = None
        self._redactor = Redactor(tuple)

    def redactor(self, path: Path) -> Redactor:
        try:
            stat = path.stat()
            key: tuple[object, ...] = (path, stat.st_mtime_ns, stat.st_size, stat.st_ino)
        except OSError:
            key = (path,)
        with self._lock:
            if key != self._key:
                try:
                    values = tuple(SecretsFile(path).values().values()) if len(key) > 1 else ()
                except ValueError:  # unreadable: the Host reports it; redact what it knows
                    values = ()
                values += tuple(environment_secrets(os.environ))  # keys named like keys
                self._redactor, self._key = Redactor(lambda: values), key
            return self._redactor


_saved = _SavedSecrets()


def log_redactors(paths: VisPaths | None = None) -> list[Redactor]:
    """The redactors :func:`redact_log_text` applies, taken once (for many texts in a row)."""
    active = _filter
    saved = _saved.redactor((paths or VisPaths.from_env()).secrets_file)
    return [active.redactor, saved] if active is not None else [saved]


def redact_log_text(text: str, paths: VisPaths | None = None) -> str:
    """``text`` as it may be written to the log folder: every saved secret as ``[REDACTED]``
    (the attached Host's secrets, and those in the secrets file of ``paths``)."""
    active = _filter
    if active is not None:
        text = active.redactor.text(text)
    return _saved.redactor((paths or VisPaths.from_env()).secrets_file).text(text)
