"""Closed sets of ``vis.notify`` kinds and ``vis.log`` levels."""

from __future__ import annotations

from enum import StrEnum


class NotifyKind(StrEnum):
    """What a notification (``vis.notify``, a core notice) is: the toast it shows as."""

    INFO = "info"
    SUCCESS = "success"
    WARN = "warn"
    ERROR = "error"


class LogLevel(StrEnum):
    """A ``vis.log`` level."""

    TRACE = "trace"
    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"
