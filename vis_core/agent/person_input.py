"""What the person adds to a turn besides the request: ``@path`` files and ``!command`` output."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vis_core.events import UserContext
from vis_core.model.turn import ContextOrigin
from vis_core.sandbox.host import HandleCall

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession


def _at_turn(session: AgentSession, turn_id: str) -> None:
    """Tool calls made now belong to ``turn_id``, outside any block."""
    site = session.invoker.site
    site.turn_id, site.iteration_id, site.form = turn_id, None, 0


async def attach_files(session: AgentSession, turn_id: str, paths: Sequence[str]) -> None:
    """Each file's current ``cat`` view goes with the request (shown as the cat Activity)."""
    for path in dict.fromkeys(paths):
        _at_turn(session, turn_id)
        try:
            view = str(await session.invoker.call("cat", (path,), {}))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the failed cat Activity shows why; the model reads it too
            view = f"(could not be read: {exc})"
        text = f"[Vis: the person attached @{path}; its current cat view follows]\n{view}"
        await session.emit(
            UserContext(
                session.id, turn_id=turn_id, origin=ContextOrigin.FILE, title=path, text=text
            )
        )


async def run_command(session: AgentSession, turn_id: str, request: str) -> None:
    """``!command``: run it in the workspace like the model's ``shell`` (a terminal Activity),
    wait for it, and keep what it printed for the model's next request."""
    command = request.removeprefix("!").strip()
    if not command:
        raise ValueError("write a command after !, e.g. !git status")
    _at_turn(session, turn_id)
    handle = await session.invoker.call("shell", (command,), {})
    try:
        status = await session.invoker.call_handle(HandleCall(handle, "wait", (None,), {}, "shell"))
    except asyncio.CancelledError:
        await asyncio.shield(handle.stop())
        raise
    text = f"[Vis: the person ran this command in the workspace]\n{status}"
    await session.emit(
        UserContext(
            session.id, turn_id=turn_id, origin=ContextOrigin.SHELL, title=command, text=text
        )
    )
