"""The context of the tool call or callback Vis is running now: session, owner, publishing."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vis_core.model.channel import Channel

if TYPE_CHECKING:
    from vis_core.extension.runtime import ActivityPort, Runtime
    from vis_core.model.activity import ActivityPresentation


@dataclass(frozen=True)
class CallContext:
    """Who is being called: in which session and workspace, for which extension and Activity,
    and which runtime serves the SDK calls it makes."""

    session_id: str | None
    workspace_root: Path
    project_root: Path
    owner: str = "vis"
    channel: Channel = Channel.TUI
    publish: Callable[[ActivityPresentation], None] | None = None
    # the runtime that serves this call's SDK calls (None: the one a child process installed)
    runtime: Runtime | None = None
    # the event loop of the host the call came from (SDK calls wait on it from a thread)
    loop: asyncio.AbstractEventLoop | None = None
    # the session's Activities and tools: calls made from here show under ``activity_id``
    activities: ActivityPort | None = None
    activity_id: str | None = None
    turn_id: str | None = None
    iteration_id: str | None = None
    # the extensions waiting on this call to return (``vis.tools`` refuses calls back into them)
    callers: tuple[str, ...] = ()
    # the agent session running the call, for Vis's own tools (``fold_session``)
    session: object | None = None
    # forms the person did not submit during the call (its Activity must not end as a plain ✓)
    unanswered_forms: list[str] = field(default_factory=list, compare=False)


_current: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "vis_call_context", default=None
)


def current_call() -> CallContext | None:
    """The running call's context, or ``None`` outside Vis callbacks."""
    return _current.get()


def serving_runtime(serving: Runtime | None = None) -> Runtime | None:
    """The runtime of the running call, else ``serving``: who serves a request made outside
    any call (a thread of an extension asks its host) passes its own."""
    call = _current.get()
    if call is not None and call.runtime is not None:
        return call.runtime
    return serving


# ``calling`` without a context manager, for a per-call path where even that costs: ``token =
# enter_call(context)``, then ``leave_call(token)`` (the extension worker's tool calls)
enter_call = _current.set
leave_call = _current.reset


class calling:  # named as the function it was: ``with calling(context):``
    """Run the body as ``context`` (also inherited by threads started with ``to_thread``).

    A class rather than a generator-based context manager: it wraps every extension call,
    and costs a third of one."""

    __slots__ = ("_context", "_token")

    def __init__(self, context: CallContext) -> None:
        self._context = context

    def __enter__(self) -> CallContext:
        self._token = _current.set(self._context)
        return self._context

    def __exit__(self, *_: object) -> None:
        _current.reset(self._token)


def publish_activity(presentation: ActivityPresentation) -> None:
    """Replace the current Activity's snapshot while a tool runs; empty content clears the body."""
    from vis_core.model.activity import ActivityPresentation  # the sandbox never calls this

    if not isinstance(presentation, ActivityPresentation):
        raise TypeError("publish_activity expects an ActivityPresentation")
    context = _current.get()
    if context is not None and context.publish is not None:
        context.publish(presentation)
        return
    from vis_core.extension.runtime import current_runtime  # an extension worker asks its host

    current_runtime().publish_activity(presentation)
