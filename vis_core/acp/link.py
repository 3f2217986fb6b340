"""One Vis session as the client sees it: its events, redacted, sent as updates in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from vis_core.acp.terminals import EditorTerminals
from vis_core.acp.updates import TODO_OWNER, UpdateMaker
from vis_core.events import Event

if TYPE_CHECKING:
    from vis_core.frontend import Frontend, Session

log = logging.getLogger(__name__)


def todo_items(core: Frontend, session_id: str) -> list[tuple[str, bool]]:
    """The session's todo list (the bundled todo extension's state) as (text, done)."""
    data = core.extension_state(TODO_OWNER, f"session:{session_id}")
    items = data.get("items", []) if isinstance(data, dict) else []
    return [(str(item.get("text", "")), bool(item.get("done"))) for item in items]


class SessionLink:
    """Follows ``session``'s events and sends each as ACP updates through ``connection``,
    in the order they were committed; :meth:`drain` waits until all were sent."""

    def __init__(
        self, core: Frontend, session: Session, connection: Any, *, terminals: bool = False
    ) -> None:
        """``terminals``: the editor offers terminals; the model's commands are shown there."""
        self.core = core
        self.session = session
        self.connection = connection
        self.terminals = (
            EditorTerminals(connection, session.id, core.workspace) if terminals else None
        )
        self.updates = UpdateMaker(
            core.workspace, lambda: todo_items(core, session.id), self.terminals
        )
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._sender = asyncio.get_running_loop().create_task(self._send_all())
        self._unsubscribe = session.subscribe(self.follow)

    def stream_thinking(self) -> None:
        """Send the model's reasoning as it streams (redacted), not once its block ends."""
        from acp import update_agent_thought_text

        core = self.core
        self.updates.live_thinking = True
        core.stream_thinking(
            self.session, lambda text: self.send(update_agent_thought_text(core.redact_text(text)))
        )

    def follow(self, event: Event) -> None:
        event = self.core.redact_event(event)  # saved secrets never reach the client
        for update in self.updates(event):
            self._queue.put_nowait(update)

    def send(self, update: Any) -> None:
        self._queue.put_nowait(update)

    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                # a tool call shown in an editor terminal is made as it is sent
                made_now = [update]
                if callable(update):
                    made_now = await cast("Callable[[], Awaitable[list[Any]]]", update)()
                for made in made_now:
                    await self.connection.session_update(self.session.id, made)
            except Exception:  # the client went away or refused one: the rest still go
                log.warning("could not send an update to the client", exc_info=True)
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        await self._queue.join()

    async def close(self) -> None:
        self._unsubscribe()
        self._sender.cancel()
        await asyncio.gather(self._sender, return_exceptions=True)
        if self.terminals is not None:
            self.terminals.close()
