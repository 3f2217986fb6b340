"""What a child session shows in its parent: its Activities under the call, its cost added."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

from vis_core.agent.session import CHILD_PURPOSE
from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    Event,
    UsageReported,
)

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession

MIRROR_TASK = "vis-child-session-mirror"  # the name of each Mirror's forwarding task
_ACTIVITY_EVENTS = (ActivityStarted, ActivityUpdated, ActivityEnded)


@dataclasses.dataclass(frozen=True)
class CallSite:
    """The parent's call that started the child: its turn, iteration and Activity."""

    turn_id: str | None
    iteration_id: str | None
    activity_id: str | None


class Mirror:
    """Follows a child session's committed events and emits, in the parent, in order: each
    Activity of the child under the call that started it, and each request's usage and cost
    (``purpose`` "subagent": counted in the parent's cost, not in its context)."""

    def __init__(self, parent: AgentSession, site: CallSite) -> None:
        self._parent = parent
        self._site = site
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._forward(), name=MIRROR_TASK)

    def __call__(self, event: Event) -> None:
        copied = self._copy(event)
        if copied is not None:
            self._queue.put_nowait(copied)

    def _copy(self, event: Event) -> Event | None:
        site, parent_id = self._site, self._parent.id
        if isinstance(event, _ACTIVITY_EVENTS) and event.activity is not None:
            record = event.activity
            record = dataclasses.replace(
                record,
                session_id=parent_id,
                turn_id=site.turn_id,
                iteration_id=site.iteration_id,
                parent_id=record.parent_id or site.activity_id,
            )
            return type(event)(parent_id, activity=record)
        if isinstance(event, UsageReported) and (event.cost or event.usage.total):
            return UsageReported(
                parent_id,
                turn_id=site.turn_id or "",
                usage=event.usage,
                cost=event.cost,
                model=event.model,
                purpose=CHILD_PURPOSE,
            )
        return None

    async def _forward(self) -> None:
        while (event := await self._queue.get()) is not None:
            await self._parent.emit(event)

    async def close(self) -> None:
        """Emit what is still queued, then stop."""
        self._queue.put_nowait(None)
        await asyncio.shield(self._task)
