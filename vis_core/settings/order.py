"""One change of settings at a time among the settings services of one process."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vis_core.settings.service import SettingsService

# the change under way where its on_change, listeners and the services hearing it run
_WITHIN: contextvars.ContextVar[object | None] = contextvars.ContextVar("vis_change", default=None)


class ChangeOrder:
    """The settings services of one process (one per workspace; they share the user's files,
    config.toml and secrets) and their changes, saves and re-reads, made one at a time: each
    reads its old values after the last one's listeners ran."""

    def __init__(self) -> None:
        self.services: list[SettingsService] = []
        self._lock = asyncio.Lock()
        self._under_way: object | None = None

    @property
    def busy(self) -> bool:
        """Whether the files must not be read again here and now: a change is under way (its
        thread may be writing them), or the caller is off the loop (one could start)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return True
        return self._lock.locked()

    @contextlib.asynccontextmanager
    async def one(self) -> AsyncIterator[None]:
        """Wait for the change under way, unless this one is made by it (its ``on_change``,
        a listener, another service hearing it): then it is part of that change and goes at
        once (waiting would wait for itself)."""
        within = _WITHIN.get()
        if within is not None and within is self._under_way:
            yield
            return
        async with self._lock:
            self._under_way = change = object()
            token = _WITHIN.set(change)
            try:
                yield
            finally:
                _WITHIN.reset(token)
                self._under_way = None
