"""A stdio server's stderr: read through a pipe, the last lines kept for ``/mcp``."""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable
from typing import TextIO

from vis_core.system.redaction import redact_log_text

TAIL_LINES = 40
LINE_LIMIT = 2000
# a line is kept this much past the limit until it is redacted, so that a secret the limit
# falls inside is still whole when it is matched, and never shown in part
SECRET_MARGIN = 1024


class StderrTail:
    """A pipe whose write end the server gets; a thread keeps its last lines.

    ``on_close`` runs (in the reader thread) when every holder of the write end has exited:
    for a stdio server that means the server is gone.
    """

    def __init__(self, on_close: Callable[[], None] | None = None) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "rb")
        self._lines: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._lock = threading.Lock()
        self._on_close = on_close
        self._thread = threading.Thread(target=self._read, name="mcp-stderr", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for raw in self._reader:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                with self._lock:
                    self._lines.append(line[: LINE_LIMIT + SECRET_MARGIN])
        finally:
            self._reader.close()
            if self._on_close is not None:
                self._on_close()

    def release(self) -> None:
        """Close Vis's own copy of the write end (the server keeps its copy)."""
        if not self.writer.closed:
            self.writer.close()

    def drained(self, timeout: float) -> bool:
        """Wait until every holder of the write end has exited and all it wrote is read;
        False when that takes longer than ``timeout`` seconds (a process left holding it)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def text(self) -> str:
        """The last lines, with every secret Vis knows (saved ones, keys of the environment,
        the server's own ``env``) as ``[REDACTED]``: a server that prints its token as it fails
        shows it nowhere (``/mcp``, the notice after the start, ``vis mcp list``)."""
        with self._lock:
            lines = list(self._lines)
        return "\n".join(
            line[:LINE_LIMIT] for line in redact_log_text("\n".join(lines)).split("\n")
        )
