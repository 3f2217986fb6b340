"""``logs/mcp.log``: server logging notifications, moved to ``mcp.log.1`` past 5 MB."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from vis_core.system.redaction import redact_log_text
from vis_core.terminal import terminal_text

MAX_BYTES = 5 * 1024 * 1024


class McpLog:
    """Appends ``<time> [<server>] <level> <logger>: <message>`` lines, one per message, its
    control characters written as text (``\\x1b``): ``cat`` or ``tail -f`` of the log never
    runs what a server sent."""

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def write(self, server: str, level: str, logger: str | None, message: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
        said = " ".join(f"{level} {logger or '-'}: {message}".splitlines())
        line = f"{stamp} [{server}] {terminal_text(redact_log_text(said))}\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                if self.path.stat().st_size + len(line) > self.max_bytes:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            except FileNotFoundError:
                pass
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(line)
