"""The rules of SDK calls that reach the Vis host: the bound call, its loop and 403 refusals."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from vis_core.extension.acting import loading_extension
from vis_core.extension.context import CallContext, current_call
from vis_core.extension.errors import GatewayCode, GatewayError
from vis_core.extension.place import require_trusted
from vis_core.extension_host.activity_bounds import bounded_presentation
from vis_core.model.activity import ActivityPresentation, SymbolTag
from vis_core.text_limits import one_line


def require_change(what: str) -> CallContext:
    """The bound call for a change; refused outside an active callback or session."""
    require_trusted(what)
    call = current_call()
    if call is None and loading_extension()[0]:
        raise GatewayError(
            GatewayCode.SESSION_NOT_BOUND,
            f"{what} changes something, but no session called your extension (it is loading); "
            "make the call in a tool call or a command",
        )
    if call is None:
        raise GatewayError(
            GatewayCode.FORBIDDEN_ROUTE,
            f"{what} works only in an active callback (a tool call or a command), not in a "
            "thread of your extension; use a callback",
        )
    if call.session_id is None:
        raise GatewayError(
            GatewayCode.SESSION_NOT_BOUND,
            f"{what} changes something, but no session called your extension",
        )
    return call


@dataclasses.dataclass
class ShownChange:
    """What a change shows in its Activity's summary once made."""

    summary: str = ""
    content: tuple[Any, ...] = ()  # Activity blocks shown behind the disclosure


SUMMARY_CHARS = 120


@asynccontextmanager
async def shown_change(
    call: CallContext | None, tool: str, headline: str
) -> AsyncIterator[ShownChange]:
    """Show a change an extension makes (a session created, a request sent) as an Activity of
    the bound session, under the Activity of the tool making it (on the host's loop). Outside
    a tool call (a command, a thread of the extension) the change is made without one."""
    shown = ShownChange()
    invoker = call.activities if call is not None else None
    if call is None or invoker is None:
        yield shown
        return
    record = invoker.new_record(
        tool,
        headline,
        tag=SymbolTag.MUTATION,
        owner=call.owner,
        parent_id=call.activity_id,
    )
    await invoker.show(record)
    try:
        yield shown
    except BaseException as exc:
        await invoker.show(invoker.ended(record, error=exc))
        raise
    summary = one_line(shown.summary, SUMMARY_CHARS)
    presentation = bounded_presentation(
        ActivityPresentation(headline, summary, tuple(shown.content))
    )
    record = dataclasses.replace(record, presentation=presentation)
    await invoker.show(invoker.ended(record))
