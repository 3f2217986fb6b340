"""A turn cut off by a Vis that was killed: the events that end it with what it showed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    AssistantDelta,
    AssistantMessage,
    BlockFinished,
    BlockPrinted,
    Event,
    IterationStarted,
    StoredEvent,
    TurnEnded,
)
from vis_core.model.activity import ActivityRecord, ActivityState
from vis_core.model.turn import Incomplete, TurnStatus
from vis_core.text_limits import Keep, truncate, truncation_note

if TYPE_CHECKING:
    from vis_core.store.store import Store

INTERRUPTED = (
    "interrupted: Vis stopped (it was killed or crashed) before this turn finished; what it "
    "showed until then is kept"
)
BLOCK_INTERRUPTED = "interrupted: Vis stopped (it was killed or crashed) while this ran"
# the events a turn's ending is made from (the others tell only when it last did something)
_SHOWN = frozenset(
    (
        "AssistantDelta",
        "AssistantMessage",
        "IterationStarted",
        "BlockPrinted",
        "BlockFinished",
        "ActivityStarted",
        "ActivityUpdated",
        "ActivityEnded",
    )
)


def cut_off_endings(store: Store, session_id: str) -> list[Event]:
    """The events that end each turn of ``session_id`` still ``running`` (see
    :func:`interrupted_ending`): for a session no Vis holds, whose turns were cut off."""
    running = store.running_turns(session_id)
    if not running:
        return []
    starts = store.events(session_id, types=["TurnStarted"])
    first = next(row.seq for row in starts if getattr(row.event, "turn_id", "") in running)
    logged = store.events(session_id, first - 1)
    return [
        event for turn_id in running for event in interrupted_ending(session_id, turn_id, logged)
    ]


def interrupted_ending(session_id: str, turn_id: str, logged: Sequence[StoredEvent]) -> list[Event]:
    """The events that end ``turn_id``, cut off while it ran (``logged``: the session's
    events from its start on; other turns' are passed over): each tool call's Activity that
    had not ended ends cancelled, and each block that had not ended ends with what it printed,
    both having run until the last event logged and saying they were interrupted; the answer
    that was streaming is kept as an incomplete answer; and the turn ends cancelled, saying
    why."""
    streamed: list[str] = []  # the deltas of the answer streaming when Vis stopped
    started: dict[str, float] = {}  # iteration id -> when it started, calls not ended
    printed: dict[str, list[str]] = {}  # iteration id -> what it printed so far
    iteration = 0  # the request the streaming answer belongs to (as the loop counts them)
    running: dict[str, ActivityRecord] = {}  # Activity id -> its last record, calls not ended
    for row in logged:
        if row.type not in _SHOWN:
            continue
        event = row.event
        if isinstance(event, ActivityStarted | ActivityUpdated | ActivityEnded):
            record = event.activity
            if record is not None and record.turn_id == turn_id:
                running[record.id] = record
                if isinstance(event, ActivityEnded):
                    del running[record.id]
            continue
        if getattr(event, "turn_id", None) != turn_id:
            continue
        if isinstance(event, AssistantDelta):
            streamed.append(event.text)
        elif isinstance(event, AssistantMessage):
            streamed.clear()  # that answer ended: its text is stored whole
        elif isinstance(event, IterationStarted):
            iteration = event.index
            started[event.iteration_id] = row.created
            printed[event.iteration_id] = []
        elif isinstance(event, BlockPrinted) and event.iteration_id in printed:
            printed[event.iteration_id].append(event.text)
        elif isinstance(event, BlockFinished):
            started.pop(event.iteration_id, None)
    last = logged[-1].created if logged else 0.0
    ending: list[Event] = [
        ActivityEnded(
            session_id,
            activity=replace(
                record,
                state=ActivityState.CANCELLED,
                ended_at=max(record.started_at, last),
                error=BLOCK_INTERRUPTED,
            ),
        )
        for record in running.values()
    ]
    ending += [
        BlockFinished(
            session_id,
            turn_id=turn_id,
            iteration_id=iteration_id,
            stdout=_kept("".join(printed[iteration_id])),
            error=BLOCK_INTERRUPTED,
            duration=max(0.0, last - start),
        )
        for iteration_id, start in started.items()
    ]
    text = "".join(streamed)
    if text:
        ending.append(
            AssistantMessage(
                session_id,
                turn_id=turn_id,
                iteration=iteration,
                text=text,
                incomplete=Incomplete.INTERRUPTED,
            )
        )
    ending.append(
        TurnEnded(
            session_id,
            turn_id=turn_id,
            status=TurnStatus.CANCELLED,
            content=text,
            error=INTERRUPTED,
        )
    )
    return ending


def _kept(stdout: str) -> str:
    """What a block printed as the model is shown it: its end within the output limits."""
    cut = truncate(stdout, Keep.TAIL)
    if not cut.truncated:
        return stdout
    return f"{truncation_note(cut, Keep.TAIL)}\n\n{cut.text}"
