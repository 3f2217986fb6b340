"""Stored turns as the transcript shows them, read a page at a time from the store."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vis_core.model.activity import ActivityRecord
from vis_core.model.block import FileChange
from vis_core.model.notes import background_files_line, background_line
from vis_core.model.story import StoryKind
from vis_core.model.turn import TurnStatus
from vis_tui.block_info import BlockInfo, folds_into_activity
from vis_tui.notes import (
    MUTED,
    FoldInfo,
    block_notes,
    fold_line,
    image_line,
    thinking_note,
)

if TYPE_CHECKING:
    from vis_core.frontend import History


class PartKind(StrEnum):
    REPLY = "reply"
    NOTE = "note"
    ROWS = "rows"
    FOLD = "fold"
    BLOCK = "block"


@dataclass(frozen=True)
class StoryPart:
    """One piece of a stored turn as it was shown: an answer, a note, or a run of Activities."""

    kind: PartKind
    text: str = ""
    style: str = MUTED
    activities: tuple[ActivityRecord, ...] = ()
    fold: FoldInfo | None = None
    block: BlockInfo | None = None
    shown: bool = True  # a block's row (hidden when it folds into its one Activity's)


@dataclass(frozen=True)
class AfterNote:
    """What the person was told after a turn (``/undo``, a slash command), Markdown; or
    the row of a fold ``/compact`` made after it (``fold``; ``text`` is its line); or the
    quiet line of a command left running that ended after it (``background``), with the
    files changed while it ran (``files``)."""

    text: str
    error: bool = False
    fold: FoldInfo | None = None
    background: bool = False
    files: tuple[FileChange, ...] = ()


@dataclass(frozen=True)
class StoredTurn:
    """One finished (or interrupted) turn with its answers and Activities."""

    turn_id: str
    position: int
    request: str
    replies: tuple[str, ...]
    activities: tuple[ActivityRecord, ...]
    status: TurnStatus | None
    error: str | None
    story: tuple[StoryPart, ...] = ()  # the parts in the order they happened
    notes_after: tuple[AfterNote, ...] = ()  # what the person was told after it

    def parts(self) -> tuple[StoryPart, ...]:
        """The story, or (a turn written without one) replies, the Activities, the last reply."""
        if self.story:
            return self.story
        replies = list(self.replies)
        last = replies.pop() if replies and self.activities else None
        parts = [StoryPart(PartKind.REPLY, reply) for reply in replies if reply]
        if self.activities:
            parts.append(StoryPart(PartKind.ROWS, activities=self.activities))
        if last:
            parts.append(StoryPart(PartKind.REPLY, last))
        return tuple(parts)


@dataclass(frozen=True)
class TurnPage:
    """Turns oldest first; ``has_older`` says whether an older page exists."""

    turns: tuple[StoredTurn, ...]
    has_older: bool
    notes_before: tuple[AfterNote, ...] = ()  # said before the first turn (on the first page)


PageLoader = Callable[[int | None], TurnPage]
PAGE_SIZE = 20


def _rows(value: Any, attribute: str) -> list[Any]:
    """The list inside a store page object (or the value itself when it is a list)."""
    if isinstance(value, list | tuple):
        return list(value)
    return list(getattr(value, attribute))


def notes_after_turns(
    store: History, session_id: str, seen: int | None = None
) -> dict[str, tuple[AfterNote, ...]]:
    """The notes of ``/undo`` and of slash commands kept with their events, the folds made
    between turns (``/compact``'s), the ends of commands told between turns and the files
    changed while they ran (one told in a turn, live inside it: after that turn), by the turn
    that came before each (``seen``: only those of seqs up to it)."""
    from vis_core.events import (
        BackgroundCommandEnded,
        BackgroundFilesChanged,
        CommandNoted,
        FoldCreated,
        TurnStarted,
        UserContext,
    )
    from vis_core.model.turn import ContextOrigin

    notes: dict[str, list[AfterNote]] = {}
    turn_id = ""  # notes before the first turn have no turn to follow
    types = [
        TurnStarted.type,
        UserContext.type,
        CommandNoted.type,
        FoldCreated.type,
        BackgroundCommandEnded.type,
        BackgroundFilesChanged.type,
    ]
    for row in store.events(session_id, types=types):
        if seen is not None and row.seq > seen:
            break
        event = row.event
        if isinstance(event, TurnStarted):
            turn_id = event.turn_id
        elif isinstance(event, UserContext) and event.origin is ContextOrigin.UNDO and event.note:
            notes.setdefault(turn_id, []).append(AfterNote(event.note))
        elif isinstance(event, CommandNoted) and event.markdown:
            notes.setdefault(turn_id, []).append(AfterNote(event.markdown, not event.ok))
        elif isinstance(event, FoldCreated) and (fold := FoldInfo.of(event)).after_turn:
            notes.setdefault(turn_id, []).append(AfterNote(fold_line(fold), fold=fold))
        elif isinstance(event, BackgroundCommandEnded) and not event.turn_id:
            line = AfterNote(background_line(event), background=True)
            notes.setdefault(turn_id, []).append(line)
        elif isinstance(event, BackgroundFilesChanged):
            line = AfterNote(background_files_line(event), background=True, files=event.files)
            notes.setdefault(turn_id, []).append(line)
    return {key: tuple(value) for key, value in notes.items()}


def images_of_turns(
    store: History, session_id: str, turn_id: str | None = None
) -> dict[str, tuple[StoryPart, ...]]:
    """The rows of the images the person sent, by turn (``turn_id``: of that turn only; their
    events: the bytes are never read here)."""
    from vis_core.events import ImageAttached

    rows: dict[str, list[StoryPart]] = {}
    for row in store.events(session_id, types=[ImageAttached.type]):
        event = row.event
        if isinstance(event, ImageAttached) and turn_id in (None, event.turn_id):
            rows.setdefault(event.turn_id, []).append(StoryPart(PartKind.NOTE, image_line(event)))
    return {key: tuple(value) for key, value in rows.items()}


def store_page_loader(
    store: History,
    session_id: str,
    limit: int = PAGE_SIZE,
    *,
    shown: Collection[str] | None = None,
    seen: int | None = None,
) -> PageLoader:
    """A loader reading ``store.turns_page`` and ``store.activities`` for one session;
    ``shown``: only these turns; ``seen``: the notes after turns of seqs up to it (a front
    end that follows the session live shows those after it, and the turns that had not
    ended, from their events)."""
    notes = notes_after_turns(store, session_id, seen)
    images = images_of_turns(store, session_id)

    def load(before_position: int | None) -> TurnPage:
        rows = _rows(
            store.turns_page(session_id, before_position=before_position, limit=limit + 1),
            "turns",
        )
        rows.sort(key=lambda row: row.position)
        has_older = len(rows) > limit
        rows = [row for row in rows[-limit:] if shown is None or row.id in shown]
        turns = [_stored_turn(store, session_id, row, images, notes) for row in rows]
        before = notes.get("", ()) if not has_older else ()
        return TurnPage(tuple(turns), has_older, before)

    return load


def ended_turn(store: History, session_id: str, turn_id: str, position: int) -> StoredTurn | None:
    """The stored turn ``turn_id`` (at ``position``) once the store has its end; None before
    that, or when it is not there (undone). What was said after it is shown live, not read."""
    rows = _rows(store.turns_page(session_id, before_position=position + 1, limit=1), "turns")
    if not rows or rows[0].id != turn_id or rows[0].status is TurnStatus.RUNNING:
        return None
    images = images_of_turns(store, session_id, turn_id)
    return _stored_turn(store, session_id, rows[0], images, {})


def _stored_turn(
    store: History,
    session_id: str,
    row: Any,
    images: dict[str, tuple[StoryPart, ...]],
    notes: dict[str, tuple[AfterNote, ...]],
) -> StoredTurn:
    """The turn of the store's ``row``, with its story, its images and the notes after it."""
    activities = tuple(_rows(store.activities(row.id), "activities"))
    story = build_story(store.turn_story(session_id, row.id), activities)
    return StoredTurn(
        turn_id=row.id,
        position=row.position,
        request=row.request,
        replies=tuple(getattr(row, "replies", ()) or ((row.content,) if row.content else ())),
        activities=activities,
        status=row.status,
        error=row.error,
        story=(*images.get(row.id, ()), *story),
        notes_after=notes.get(row.id, ()),
    )


def build_story(
    entries: list[tuple[int, StoryKind, Any]], activities: tuple[ActivityRecord, ...]
) -> tuple[StoryPart, ...]:
    """Parts from a turn's stored ``entries`` (``Store.turn_story``): Activities that started
    one after another share one run of rows, and a later call on a handle joins the run of
    the handle's first call (live, it updates that row), as they were shown live."""
    by_id = {record.id: record for record in activities}
    entries = _blocks_first(entries, by_id)
    parts: list[StoryPart | list[ActivityRecord]] = []
    runs: dict[tuple[str, int, str], list[ActivityRecord]] = {}
    errors: list[str] = []

    def text_part(part: StoryPart) -> None:
        parts.append(part)

    for _, kind, value in entries:
        if kind is StoryKind.ACTIVITY:
            record = by_id.get(value)
            if record is None:
                continue
            errors.append(record.error or "")
            run = runs.get(record.group_key) if record.group_key is not None else None
            if run is None:
                if not parts or not isinstance(parts[-1], list):
                    parts.append([])
                run = parts[-1]
                assert isinstance(run, list)
                if record.group_key is not None:
                    runs[record.group_key] = run
            run.append(record)
        elif kind is StoryKind.REPLY and value:
            text_part(StoryPart(PartKind.REPLY, value))
        elif kind is StoryKind.THINKING and (note := thinking_note(value)):
            text_part(StoryPart(PartKind.NOTE, note))
        elif kind is StoryKind.BACKGROUND:
            text_part(StoryPart(PartKind.NOTE, background_line(value)))
        elif kind is StoryKind.DRAFT:  # entering or leaving a draft
            text_part(StoryPart(PartKind.NOTE, f"✎ {value}"))
        elif kind is StoryKind.FOLD:
            fold = FoldInfo.of(value)
            if not fold.after_turn:  # one made after the turn is a note after it
                text_part(StoryPart(PartKind.FOLD, fold_line(fold), fold=fold))
        elif kind is StoryKind.CODE:
            info = BlockInfo.stored(value)
            shown = not folds_into_activity(info, activities)
            text_part(StoryPart(PartKind.BLOCK, block=info, shown=shown))
        elif kind is StoryKind.BLOCK:
            error, restarted = value
            for text, style in block_notes(error, restarted, errors):
                text_part(StoryPart(PartKind.NOTE, text, style))
    return tuple(
        StoryPart(PartKind.ROWS, activities=tuple(part)) if isinstance(part, list) else part
        for part in parts
    )


def _blocks_first(
    entries: list[tuple[int, StoryKind, Any]], by_id: dict[str, ActivityRecord]
) -> list[tuple[int, StoryKind, Any]]:
    """``entries`` with each block (stored where it ended) moved before its first Activity,
    where it was shown live."""
    first: dict[str, int] = {}  # iteration id: index of its first Activity
    for index, (_, kind, value) in enumerate(entries):
        if kind is StoryKind.ACTIVITY and (record := by_id.get(value)) and record.iteration_id:
            first.setdefault(record.iteration_id, index)
    moved: dict[int, list[tuple[int, StoryKind, Any]]] = {}
    kept = []
    for index, entry in enumerate(entries):
        at = first.get(entry[2]["iteration_id"]) if entry[1] is StoryKind.CODE else None
        if at is not None and at < index:
            moved.setdefault(at, []).append(entry)
        else:
            kept.append((index, entry))
    if not moved:
        return entries
    result: list[tuple[int, StoryKind, Any]] = []
    for index, entry in kept:
        result.extend(moved.pop(index, ()))
        result.append(entry)
    return result
