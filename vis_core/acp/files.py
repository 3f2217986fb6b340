"""The client's ``fs`` methods as Vis's file buffers: what ``cat`` and ``patch`` see."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from vis_core.frontend import model_stopped

log = logging.getLogger(__name__)
CLIENT_FS_SECONDS = 30.0


class ClientFiles:
    """Reads and writes text files through the client (its unsaved buffers included) for
    one session. Called from the tools' worker threads; on the loop itself, or when the
    client cannot answer, the tool uses disk."""

    def __init__(
        self,
        connection: Any,
        session_id: str,
        loop: asyncio.AbstractEventLoop,
        *,
        read: bool,
        write: bool,
    ) -> None:
        self.connection = connection
        self.session_id = session_id
        self.loop = loop
        self.can_read = read
        self.can_write = write

    def _call(self, coroutine: Any) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:  # would wait on itself: the tool uses disk
            coroutine.close()
            raise RuntimeError("called on the event loop")
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(CLIENT_FS_SECONDS)

    def quiet(self) -> AbstractContextManager[object]:
        """The model's processes stopped while a path is checked and the editor opens it."""
        return model_stopped()

    def read_text(self, path: Path) -> str | None:
        if not self.can_read:
            return None
        try:
            response = self._call(
                self.connection.read_text_file(session_id=self.session_id, path=str(path))
            )
        except Exception as exc:  # the client refused or failed: disk is the answer
            log.warning("the client could not read %s (%s); read from disk", path, exc)
            return None
        return None if response is None else response.content

    def write_text(self, path: Path, text: str) -> bool:
        if not self.can_write:
            return False
        try:
            self._call(
                self.connection.write_text_file(
                    session_id=self.session_id, path=str(path), content=text
                )
            )
        except Exception as exc:
            log.warning("the client could not write %s (%s); written to disk", path, exc)
            return False
        return True
