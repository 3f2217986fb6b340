"""Maps each core event type to what the main screen does with it (a registry, not a chain)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    AssistantDelta,
    AssistantMessage,
    AssistantThinking,
    BackgroundCommandEnded,
    BackgroundFilesChanged,
    BlockFinished,
    ContextNote,
    DraftChanged,
    Event,
    FoldCreated,
    ImageAttached,
    IterationStarted,
    LiveClosed,
    LiveOpened,
    LiveUpdated,
    Notification,
    TurnEnded,
    TurnStarted,
    UsageReported,
)
from vis_core.model.activity import ActivityState
from vis_core.model.block import PYTHON_EXECUTION
from vis_core.model.notes import background_files_line, background_line
from vis_core.model.notify import NotifyKind
from vis_core.model.usage import UsagePurpose
from vis_tui.block_info import BlockInfo
from vis_tui.notes import FoldInfo, block_notes, image_line, thinking_note
from vis_tui.widgets.progress_line import ProgressLine
from vis_tui.widgets.status import StatusBar
from vis_tui.widgets.transcript import Transcript


class EventTarget(Protocol):
    """What event handlers act on: the main screen's transcript, status bar and toasts."""

    transcript: Transcript
    status_bar: StatusBar
    progress: ProgressLine

    def toast(self, text: str, kind: NotifyKind) -> None: ...
    def turn_finished(self, event: TurnEnded) -> None: ...
    def count_draft_files(self) -> object: ...  # a worker counts them
    def count_background(self) -> None: ...
    def keep_ended(self, turn_id: str) -> object: ...  # a worker reads it back


EventHandler = Callable[[EventTarget, Any], None]
EVENT_HANDLERS: dict[type[Event], EventHandler] = {}
H = TypeVar("H", bound=EventHandler)


def handles(*event_types: type[Event]) -> Callable[[H], H]:
    """Register the decorated function for ``event_types`` (extensions of the TUI may add more)."""

    def register(handler: H) -> H:
        for event_type in event_types:
            EVENT_HANDLERS[event_type] = handler
        return handler

    return register


# Handlers whose modules load on first need (not before the first frame): event type → module.
LATER_HANDLERS: dict[type[Event], str] = {
    LiveOpened: "vis_tui.widgets.live",
    LiveUpdated: "vis_tui.widgets.live",
    LiveClosed: "vis_tui.widgets.live",
}


def dispatch(target: EventTarget, event: Event) -> bool:
    """Send ``event`` to its handler; False when no handler is registered for its type."""
    handler = EVENT_HANDLERS.get(type(event))
    if handler is None and type(event) in LATER_HANDLERS:
        importlib.import_module(LATER_HANDLERS[type(event)])
        handler = EVENT_HANDLERS.get(type(event))
    if handler is None:
        return False
    handler(target, event)
    return True


@handles(TurnStarted)
def _turn_started(target: EventTarget, event: TurnStarted) -> None:
    if event.turn_id not in target.transcript.turns:
        target.transcript.add_turn(event.turn_id, event.position, event.request)
    target.status_bar.running = True
    target.progress.begin()


@handles(ImageAttached)
def _image(target: EventTarget, event: ImageAttached) -> None:
    target.transcript.turn(event.turn_id).show_note(image_line(event))


@handles(AssistantDelta)
def _delta(target: EventTarget, event: AssistantDelta) -> None:
    target.transcript.turn(event.turn_id).add_delta(event.text)
    target.progress.streamed_text(event.text)


@handles(AssistantMessage)
def _message(target: EventTarget, event: AssistantMessage) -> None:
    target.transcript.turn(event.turn_id).set_message(event.text)


@handles(AssistantThinking)
def _thinking(target: EventTarget, event: AssistantThinking) -> None:
    """Thinking stays collapsed to one muted line; the whole text is in the session store."""
    target.progress.doing = "thinking"
    note = thinking_note(event.text)
    if note is not None:
        target.transcript.turn(event.turn_id).show_note(note)


@handles(IterationStarted)
def _iteration(target: EventTarget, event: IterationStarted) -> None:
    view = target.transcript.turn(event.turn_id)
    view.close_answer()
    is_block = event.tool == PYTHON_EXECUTION
    if is_block:
        view.show_block(BlockInfo(event.iteration_id, event.code))
    target.progress.doing = "running a block" if is_block else f"calling {event.tool}"


@handles(BlockFinished)
def _block(target: EventTarget, event: BlockFinished) -> None:
    view = target.transcript.turn(event.turn_id)
    target.progress.doing = "waiting for the model"
    block = view.blocks.get(event.iteration_id)
    error = event.error
    if block is not None:  # its row shows the error
        view.show_block(block.info.finished(event))
        error = None
    errors = [row.record.error or "" for row in view.rows.values()]
    for text, style in block_notes(error, event.restarted, errors):
        view.show_note(text, style)


@handles(ActivityStarted, ActivityUpdated, ActivityEnded)
def _activity(target: EventTarget, event: ActivityStarted) -> None:
    record = event.activity
    if record is None:
        return
    if record.state is ActivityState.RUNNING:
        what = record.presentation.headline if record.presentation else record.tool
        target.progress.doing = f"waiting on {what}"
        if not record.show_start:
            return
    elif target.progress.doing.startswith("waiting on"):
        target.progress.doing = "running a block"
    if record.handle_id is not None:  # a command's row: it may have ended in the background
        target.count_background()
    turn_id = record.turn_id or ""
    view = target.transcript.shown_turn(turn_id)  # None: an ended turn paged away
    if view is not None:
        view.show_activity(record)
    if view is None or view.status is not None:  # after its end: a command it left running
        target.keep_ended(turn_id)  # the copy it is rebuilt from says so too


@handles(UsageReported)
def _usage(target: EventTarget, event: UsageReported) -> None:
    if not UsagePurpose(event.purpose).measures_context:  # a side call Vis made
        target.status_bar.add_usage(event.usage, event.cost, 0, 0)
        return
    if event.model:  # the model that answered: a switch between requests shows here too
        target.status_bar.model = event.model
    # the meter shows the soft budget's share, the same numbers as session["utilization"]
    budget = event.context_budget or event.context_limit
    tokens = event.context_tokens or target.status_bar.context_tokens  # as the session keeps it
    target.status_bar.add_usage(event.usage, event.cost, tokens, budget)
    target.progress.add_output_tokens(event.usage.output)


@handles(FoldCreated)
def _fold(target: EventTarget, event: FoldCreated) -> None:
    """A fold is one quiet row with the gist; opening it shows what left the context. One
    made between turns (``/compact``) goes after them, where the command's note follows."""
    fold = FoldInfo.of(event)
    if fold.after_turn:
        from vis_tui.widgets.fold_row import FoldRow

        target.transcript.add_after_turns(FoldRow(fold))
    elif (view := target.transcript.shown_turn(event.turn_id)) is not None:
        view.show_fold(fold)


@handles(BackgroundCommandEnded)
def _background(target: EventTarget, event: BackgroundCommandEnded) -> None:
    """A command left running has ended: one quiet line (the model reads its output tail),
    in the turn whose request told the model; told between turns (no turn), after the
    turns, where the person looks, as Vis's own note (a person reading earlier turns stays
    there)."""
    if not event.turn_id:
        from vis_tui.widgets.after_turn import BackgroundNote

        target.transcript.add_after_turns(BackgroundNote(background_line(event)), unprompted=True)
    elif (view := target.transcript.shown_turn(event.turn_id)) is not None:
        view.show_note(background_line(event))


@handles(BackgroundFilesChanged)
def _background_files(target: EventTarget, event: BackgroundFilesChanged) -> None:
    """Files changed while a command left running ran: its line, the files and their diffs,
    after the turns (told between them), or in the turn about to take its checkpoint."""
    from vis_tui.widgets.after_turn import BackgroundFilesNote

    note = BackgroundFilesNote(background_files_line(event), event.files)
    if not event.turn_id:
        target.transcript.add_after_turns(note, unprompted=True)
    elif (view := target.transcript.shown_turn(event.turn_id)) is not None:
        view.show_widget(note)


@handles(ContextNote)
def _context_note(target: EventTarget, event: ContextNote) -> None:
    """Vis added a note to the model's request (the budget's hint, MCP changes): one quiet line."""
    target.transcript.turn(event.turn_id).show_note(f"⋯ {event.summary()}")


@handles(Notification)
def _notification(target: EventTarget, event: Notification) -> None:
    """A toast, and a warning or error stays in the transcript too (a control file a block
    made, a hook that failed: read after the toast is gone). One about a passing state (a
    retry) is what the progress line says until the turn moves on (the retried answer
    streams, or the turn ends), not a toast that lingers."""
    if event.transient and target.progress.running:
        target.progress.doing = event.text
        return
    target.toast(event.text, event.kind)
    if event.kind in (NotifyKind.WARN, NotifyKind.ERROR):  # a toast is gone in seconds
        target.transcript.add_message(f"⚠ {event.text}", plain=True, unprompted=True)


@handles(DraftChanged)
def _draft(target: EventTarget, event: DraftChanged) -> None:
    """Entering or leaving a draft: the label in the status bar, and a mark in the turn that
    did it (stored with the turn, so a resumed session shows it too). Outside a turn the
    person's ``/draft`` did it, and its note (kept as ``CommandNoted``) says so: a second
    mark would say it again, and only live."""
    target.status_bar.draft = event.label if event.in_draft else ""
    target.status_bar.draft_files = event.files if event.in_draft else 0
    if event.turn_id:
        target.transcript.turn(event.turn_id).show_note(f"✎ {event.text}", "$text-warning")
    if event.in_draft:
        target.count_draft_files()


@handles(TurnEnded)
def _turn_ended(target: EventTarget, event: TurnEnded) -> None:
    target.transcript.turn(event.turn_id).end(event.status, event.error)
    target.status_bar.running = False
    target.progress.end()
    target.turn_finished(event)
    target.count_background()
    if target.status_bar.draft:
        target.count_draft_files()
