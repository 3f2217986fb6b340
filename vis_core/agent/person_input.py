"""What the person adds to a turn besides the request: ``@path`` files and ``!command`` output."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from vis_core.agent.invoker import CallSite
from vis_core.events import UserContext
from vis_core.model.turn import ContextOrigin
from vis_core.model.undo import CHANGED_SINCE, NOT_KEPT, UndoReport

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession


def _at_turn(session: AgentSession, turn_id: str) -> None:
    """Tool calls made now belong to ``turn_id``, outside any block."""
    session.position.site = CallSite(turn_id)


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
    from vis_core.sandbox.host import HandleCall  # the sandbox's IPC: only for a command

    command = request.removeprefix("!").strip()
    if not command:
        raise ValueError("write a command after !, e.g. !git status")
    await session.checkpoint(turn_id)
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


async def undo(
    session: AgentSession, steps: int = 1, note: Callable[[UndoReport], str] | None = None
) -> UndoReport:
    """``/undo [N]``: the workspace as before the N-th newest turn that changed files or
    links; the model reads what was restored with its next request. ``note`` says it to the
    person; it is kept with the event, so a resumed session shows it again."""
    if session.running:
        raise RuntimeError("a turn is running; press Esc to stop it, then /undo")
    if session.checkpoints is None:
        raise LookupError("this session keeps no checkpoints")
    if session.background_files is not None:  # what its commands changed is undone too
        await session.background_files.list(end=True)
    report = await asyncio.to_thread(session.checkpoints.restore, steps)
    turns = ", ".join(str(n) for n in report.turns)
    lines = [f"[Vis: the person undid the file changes of turn {turns}]"]
    links = set(report.links)
    lines += [f"restored {p}" + (" (a link)" if p in links else "") for p in report.restored]
    made = {p: "this link" if p in links else "it" for p in report.removed}
    lines += [f"deleted {p} (the turn created {made[p]})" for p in report.removed]
    lines += [f"could not restore {path} ({NOT_KEPT})" for path in report.not_kept]
    lines += [f"left {path} as it is: {CHANGED_SINCE}" for path in report.kept]
    if not report.changed and not report.kept:
        lines.append("no file or link differed from before the turn")
    await session.emit(
        UserContext(
            session.id,
            origin=ContextOrigin.UNDO,
            title="/undo",
            text="\n".join(lines),
            note=note(report) if note is not None else "",
        )
    )
    return report
