"""What the host gives extension calls in one session: call contexts, the store, notifications."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.events import Event, Notification
from vis_core.extension.context import CallContext
from vis_core.model.notify import NotifyKind

if TYPE_CHECKING:
    from vis_core.store import Store

log = logging.getLogger(__name__)
NOTIFY_WAIT = 5.0
_sessions: dict[str, SessionServices] = {}


@dataclass
class SessionServices:
    """Builds the :class:`CallContext` of extension callbacks run for one session."""

    session_id: str | None
    workspace_root: Path
    project_root: Path
    channel: str = "tui"
    store: Store | None = None
    emit: Callable[[Event], Coroutine[Any, Any, None]] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def notify(self, text: str, kind: NotifyKind | str) -> None:
        """Emit a :class:`Notification` in this session, from the loop or a worker thread."""
        if self.emit is None or self.loop is None or self.loop.is_closed():
            log.info("notification (%s) with no session to show it: %s", kind, text)
            return
        coro = self.emit(Notification(self.session_id or "", text=text, kind=NotifyKind(kind)))
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.loop.create_task(coro)
            return
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            future.result(NOTIFY_WAIT)
        except TimeoutError:
            log.warning("notification %r was not shown within %.0f s", text, NOTIFY_WAIT)

    def services(self) -> dict[str, Any]:
        """The ``CallContext.services`` entries this module provides."""
        values: dict[str, Any] = {**self.extra, "notify": self.notify}
        if self.store is not None:
            values["store"] = self.store
        return values

    def context_for(self, owner: str) -> CallContext:
        """The context of a callback of extension ``owner`` in this session."""
        return CallContext(
            session_id=self.session_id,
            workspace_root=self.workspace_root,
            project_root=self.project_root,
            owner=owner,
            channel=self.channel,
            services=self.services(),
        )


def register_services(services: SessionServices) -> None:
    """Make ``services`` reachable from any call in its session (``vis.notify``, ``vis.state``)."""
    if services.session_id is not None:
        _sessions[services.session_id] = services


def unregister_services(services: SessionServices) -> None:
    if services.session_id is not None and _sessions.get(services.session_id) is services:
        del _sessions[services.session_id]


def services_for(call: CallContext | None) -> dict[str, Any]:
    """The services of ``call``: its own entries over those of its session."""
    if call is None:
        return {}
    registered = _sessions.get(call.session_id) if call.session_id is not None else None
    return {**(registered.services() if registered is not None else {}), **call.services}
