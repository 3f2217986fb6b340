"""Background commands report back: a ``shell()`` left running tells the model how it ended."""

from __future__ import annotations

from vis_core.events import BackgroundCommandEnded
from vis_core.tools.shell import ShellManager, ShellStatus


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
