"""What Vis logs before its log file is attached (settings and extensions being read) waits
for that file, instead of reaching stderr raw through Python's last-resort handler, beside
Vis's own messages and never in the log. Standard library only: held from a command's start."""

from __future__ import annotations

import logging

HELD = 1000  # records kept at most; later ones before the file is attached are dropped


class HeldLogs(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) < HELD:
            self.records.append(record)


_held: HeldLogs | None = None


def hold() -> None:
    """Hold what is logged from now until :func:`release` (once per process)."""
    global _held
    if _held is None:
        _held = HeldLogs()
        logging.getLogger().addHandler(_held)


def release(into: logging.Handler) -> None:
    """Hand what was held to ``into`` (the log file's handler, which redacts); none is held
    after."""
    global _held
    held, _held = _held, None
    if held is not None:
        logging.getLogger().removeHandler(held)
        for record in held.records:
            into.handle(record)
