"""The context of the tool call or callback Vis is running now: session, owner, publishing."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vis_core.model.activity import ActivityPresentation


@dataclass(frozen=True)
class CallContext:
    """Who is being called: in which session and workspace, for which extension and Activity."""

    session_id: str | None
    workspace_root: Path
    project_root: Path
    owner: str = "vis"
    channel: str = "tui"
    publish: Callable[[ActivityPresentation], None] | None = None
    services: dict[str, Any] = field(default_factory=dict)

    def env(self) -> dict[str, Any]:
        """The callback env dict extensions receive."""
        return {
            "cwd": str(self.workspace_root),
            "workspace_root": str(self.workspace_root),
            "project_root": str(self.project_root),
            "session_id": self.session_id,
            "channel": self.channel,
        }


_current: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "vis_call_context", default=None
)


def current_call() -> CallContext | None:
    """The running call's context, or ``None`` outside Vis callbacks."""
    return _current.get()


@contextmanager
def calling(context: CallContext) -> Iterator[CallContext]:
    """Run the body as ``context`` (also inherited by threads started with ``to_thread``)."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def publish_activity(presentation: ActivityPresentation) -> None:
    """Replace the current Activity's snapshot while a tool runs; empty content clears the body."""
    if not isinstance(presentation, ActivityPresentation):
        raise TypeError("publish_activity expects an ActivityPresentation")
    context = _current.get()
    if context is None or context.publish is None:
        raise RuntimeError("publish_activity works only while Vis runs one of your tools")
    context.publish(presentation)
