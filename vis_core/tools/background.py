"""Background commands report back: a ``shell()`` left running tells the model how it ended,
and its row is drawn again when it exits."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    BackgroundCommandEnded,
    Event,
    TurnEnded,
    TurnStarted,
)
from vis_core.model.activity import ActivityRecord, ActivityState
from vis_core.system.loops import keep
from vis_core.system.shell import ShellHandle, ShellManager, ShellStatus
from vis_core.system.shell_view import shell_presentation


def report_of(handle: ShellHandle, session_id: str, turn_id: str) -> BackgroundCommandEnded:
    """How ``handle``'s command ended, for the model and the transcript (``turn_id`` empty:
    told between turns)."""
    state = ShellStatus(
        handle.command,
        False,
        handle.exit_code,
        "",
        handle.timed_out,
        handle.stopped,
        handle.over_memory,
    ).state
    return BackgroundCommandEnded(
        session_id,
        turn_id=turn_id,
        handle_id=handle.id,
        command=handle.command,
        exit_code=handle.exit_code,
        state=state,
        output=handle.tail(),
        runtime=handle.runtime,
    )


async def background_reports(
    shells: ShellManager, session_id: str, turn_id: str
) -> list[BackgroundCommandEnded]:
    """One event per command left running at the end of a block that has ended since, and
    whose end the model has not read through ``wait()`` or ``stop()`` (each reported once)."""
    return [report_of(h, session_id, turn_id) for h in await shells.ended_in_background()]


def follow_exits(
    shells: ShellManager,
    session_id: str,
    emit: Callable[[Event], Awaitable[None]],
    tasks: set[asyncio.Task[Any]],
    flush: Callable[[], None] = lambda: None,
    listed: Callable[[], Awaitable[None]] | None = None,
) -> Callable[[Event], None]:
    """A session watcher (``early``: it knows whether a turn runs as the turn's events are
    emitted) for the commands the session's blocks left running.

    When a command exits after the newest Activity of its handle in a turn was drawn
    "running (pid …)", that Activity is drawn again with how it ended and its real duration
    (live, and in the store for a resume), in each turn that shows the handle: a turn's row
    shows the newest call on it in that turn, so a command started in one turn and waited on
    in the next read "running" for ever in the first. While a turn runs, the turn's next
    request reports the end; an end no request will carry (between turns, or after a turn's
    last request) is reported at once when no turn runs, without a turn (``turn_id`` empty):
    the person sees it after the turns, and the model reads it with the next turn's request.
    ``tasks``: the session's, which keep the reports made as a turn ends until they are told.
    ``listed``: lists the files the session's commands changed since the last listing, after
    the reports told between turns (as the turn ends too: what they changed meanwhile).
    """
    newest: dict[tuple[str, str | None], ActivityRecord] = {}  # by handle and turn
    turn_running = False

    def watch(event: Event) -> None:
        nonlocal turn_running
        if isinstance(event, TurnStarted):
            turn_running = True
        elif isinstance(event, TurnEnded):
            turn_running = False
            keep(tasks, asyncio.ensure_future(after_turns()))
        elif isinstance(event, ActivityStarted | ActivityUpdated | ActivityEnded):
            record = event.activity
            if record is not None and record.handle_id in shells.handles:
                newest[(record.handle_id, record.turn_id)] = record

    async def report_between_turns() -> None:
        """Each end not reported yet, one at a time; each one is emitted right after the look
        that no turn runs (nothing happens in between), so a turn that starts meanwhile
        carries the others itself. None once the session closes: it stopped them."""
        while not turn_running and not shells.closing:
            handle = next(iter(shells.exited_unseen()), None)
            if handle is None:
                return
            handle.seen = True
            await emit(report_of(handle, session_id, ""))

    async def after_turns() -> None:
        await report_between_turns()
        if listed is not None and not turn_running and not shells.closing:
            await listed()

    async def exited(handle: ShellHandle) -> None:
        for key in [key for key in newest if key[0] == handle.id]:
            await redraw(handle, key)
        await after_turns()

    async def redraw(handle: ShellHandle, key: tuple[str, str | None]) -> None:
        record = newest[key]
        presentation = record.presentation
        running = f"running (pid {handle.pid})"
        if presentation is None or record.state is ActivityState.RUNNING:
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
        newest[key] = updated
        await emit(ActivityUpdated(session_id, activity=updated))
        flush()  # saved now: a command stopped as the session closes is told before the store

    shells.on_exit = exited
    return watch
