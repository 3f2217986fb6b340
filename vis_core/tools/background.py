"""Background commands report back: a ``shell()`` left running tells the model how it ended,
and its row is drawn again when it exits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    BackgroundCommandEnded,
    Event,
)
from vis_core.model.activity import ActivityRecord, ActivityState
from vis_core.system.shell import ShellHandle, ShellManager, ShellStatus
from vis_core.system.shell_view import shell_presentation


async def background_reports(
    shells: ShellManager, session_id: str, turn_id: str
) -> list[BackgroundCommandEnded]:
    """One event per command left running at the end of a block that has ended since, and
    whose end the model has not read through ``wait()`` or ``stop()`` (each reported once)."""
    reports = []
    for handle in await shells.ended_in_background():
        state = ShellStatus(
            handle.command,
            False,
            handle.exit_code,
            "",
            handle.timed_out,
            handle.stopped,
            handle.over_memory,
        ).state
        reports.append(
            BackgroundCommandEnded(
                session_id,
                turn_id=turn_id,
                handle_id=handle.id,
                command=handle.command,
                exit_code=handle.exit_code,
                state=state,
                output=handle.tail(),
                runtime=handle.runtime,
            )
        )
    return reports


def redraw_on_exit(
    shells: ShellManager,
    session_id: str,
    emit: Callable[[Event], Awaitable[None]],
    flush: Callable[[], None] = lambda: None,
) -> Callable[[Event], None]:
    """A session watcher that keeps the newest Activity of each command's handle; when a
    command exits after that Activity was drawn "running (pid …)", the Activity is drawn
    again with how it ended and its real duration (live, and in the store for a resume)."""
    newest: dict[str, ActivityRecord] = {}

    def watch(event: Event) -> None:
        if isinstance(event, ActivityStarted | ActivityUpdated | ActivityEnded):
            record = event.activity
            if record is not None and record.handle_id in shells.handles:
                newest[record.handle_id] = record

    async def exited(handle: ShellHandle) -> None:
        record = newest.get(handle.id)
        presentation = record.presentation if record is not None else None
        running = f"running (pid {handle.pid})"
        if record is None or presentation is None or record.state is ActivityState.RUNNING:
            return  # not drawn yet, or its call still runs: the call's end draws the exit
        if running not in presentation.summary:
            return
        now = shell_presentation(handle)
        state = now.summary.rsplit(" · ", 1)[-1]
        redrawn = replace(
            presentation,
            summary=presentation.summary.replace(running, state),
            content=now.content,
            aside=now.aside,
        )
        updated = replace(record, presentation=redrawn)
        newest[handle.id] = updated
        await emit(ActivityUpdated(session_id, activity=updated))
        flush()  # saved now: a command stopped as the session closes is told before the store

    shells.on_exit = exited
    return watch
