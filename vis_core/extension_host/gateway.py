"""How SDK host calls reach the running Vis: the bound call, the host, the loop and 403 refusals."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from vis_core.extension.acting import loading_extension
from vis_core.extension.context import CallContext, current_call, serving_runtime
from vis_core.extension.errors import OUTSIDE_VIS, GatewayCode, GatewayError
from vis_core.extension.place import require_trusted
from vis_core.extension_host.runtime import HostRuntime
from vis_core.model.activity import ActivityPresentation, SymbolTag
from vis_core.system.loops import run_on_loop
from vis_core.tools.display import one_line

if TYPE_CHECKING:
    from vis_core.extension_host.host_port import HostPort


def bound_call() -> CallContext | None:
    """The Vis call running in this thread (a tool call, command or callback), if any."""
    return current_call()


def host_runtime() -> HostRuntime | None:
    """The host runtime serving the running call or request (a thread of an extension asks
    with no call); None outside what the Vis host serves."""
    runtime = serving_runtime()
    return runtime if isinstance(runtime, HostRuntime) else None


def host_of(call: CallContext | None) -> HostPort | None:
    """The host serving the running call (``call`` is it), else the one of this process."""
    runtime = host_runtime()
    return None if runtime is None else runtime.host


def loop_of(call: CallContext | None, host: HostPort | None) -> asyncio.AbstractEventLoop | None:
    """The host loop ``call`` came from, else the one ``host`` runs on."""
    if call is not None and call.loop is not None:
        return call.loop
    runtime = host_runtime()
    return None if runtime is None or host is None else runtime.loop


def host_for_read(what: str) -> HostPort:
    """The host for a read (allowed in a callback and in a thread of an extension)."""
    require_trusted(what)
    host = host_of(bound_call())
    if host is None:
        raise RuntimeError(f"{what} {OUTSIDE_VIS}")
    return host


def require_change(what: str) -> tuple[CallContext, HostPort]:
    """The bound call and host for a change; refused outside an active callback or session."""
    require_trusted(what)
    call = bound_call()
    if call is None and loading_extension()[0]:
        raise GatewayError(
            GatewayCode.SESSION_NOT_BOUND,
            f"{what} changes something, but no session called your extension (it is loading); "
            "make the call in a tool call or a command",
        )
    if call is None:
        if host_of(None) is None:
            raise RuntimeError(f"{what} {OUTSIDE_VIS}")
        raise GatewayError(
            GatewayCode.FORBIDDEN_ROUTE,
            f"{what} works only in an active callback (a tool call or a command), not in a "
            "thread of your extension; use a callback",
        )
    host = host_of(call)
    if host is None:
        raise RuntimeError(f"{what} {OUTSIDE_VIS}")
    if call.session_id is None:
        raise GatewayError(
            GatewayCode.SESSION_NOT_BOUND,
            f"{what} changes something, but no session called your extension",
        )
    return call, host


@dataclasses.dataclass
class ShownChange:
    """What a change shows in its Activity's summary once made."""

    summary: str = ""
    content: tuple[Any, ...] = ()  # Activity blocks shown behind the disclosure


SUMMARY_CHARS = 120


@contextmanager
def shown_change(
    call: CallContext | None, host: HostPort, tool: str, headline: str
) -> Iterator[ShownChange]:
    """Show a change an extension makes (a session created, a request sent) as an Activity of
    the bound session, under the Activity of the tool making it. Outside a tool call (a command,
    a thread of the extension) the change is made without one."""
    shown = ShownChange()
    invoker = call.activities if call is not None else None
    loop = loop_of(call, host)
    if call is None or invoker is None or loop is None:
        yield shown
        return
    record = invoker.new_record(
        tool,
        headline,
        tag=SymbolTag.MUTATION,
        owner=call.owner,
        parent_id=call.activity_id,
    )
    run_on_loop(loop, invoker.show(record))
    try:
        yield shown
    except BaseException as exc:
        run_on_loop(loop, invoker.show(invoker.ended(record, error=exc)))
        raise
    summary = one_line(shown.summary, SUMMARY_CHARS)
    presentation = ActivityPresentation(headline, summary, tuple(shown.content))
    record = dataclasses.replace(record, presentation=presentation)
    run_on_loop(loop, invoker.show(invoker.ended(record)))
