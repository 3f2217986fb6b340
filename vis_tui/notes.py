"""The short notes a turn shows between answers and Activities, live and after resume alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vis_core.model.activity import ActivityRecord, ActivityState
from vis_core.model.block import plain_error
from vis_core.model.notes import FOLDED_BY, PREVIEW, fold_scope
from vis_core.model.turn import BLOCK_CANCELLED

THINKING_PREVIEW = 100
MUTED = "$text-muted"
WARNING = "$text-warning"
RESTARTED = "The Python sandbox restarted; saved helpers and variables were restored."


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def thinking_note(text: str) -> str | None:
    """Thinking stays one muted line; the whole text is in the session store."""
    text = " ".join(text.split())
    if not text:
        return None
    if len(text) > THINKING_PREVIEW:
        text = text[: THINKING_PREVIEW - 1] + "…"
    return f"Thinking: {text}"


def block_notes(
    error: str | None, restarted: bool, activity_errors: list[str]
) -> list[tuple[str, str]]:
    """Notes for a finished block: a sandbox restart, and an error no Activity showed already
    (an error is printed once)."""
    notes: list[tuple[str, str]] = []
    if restarted:
        notes.append((RESTARTED, MUTED))
    if error and error.strip() != BLOCK_CANCELLED:  # the turn's footer says it was cancelled
        message = plain_error(last_line(error)) or "error"
        shown = {plain_error(last_line(e)) for e in activity_errors if e}
        if message not in shown:
            notes.append((f"The code block stopped: {message}", WARNING))
    return notes


FOLD_TOOL = "fold_session"


@dataclass(frozen=True)
class FoldInfo:
    """What the transcript knows of one fold: its key, who made it, the gist and the spans."""

    key: str
    gist: str
    spans: tuple[tuple[int, int, int], ...]
    origin: str = "model"

    @classmethod
    def of(cls, data: Any) -> FoldInfo:
        """From a ``FoldCreated`` event or a stored fold (``Store.turn_story``'s dict)."""

        def get(name: str) -> Any:
            return data.get(name) if isinstance(data, dict) else getattr(data, name, None)

        spans = tuple((int(p), int(a), int(b)) for p, a, b in get("spans") or ())
        return cls(str(get("key") or ""), str(get("gist") or ""), spans, str(get("origin") or ""))

    @property
    def after_turn(self) -> bool:
        """Made between turns (``/compact`` waits for the turn to end): its row goes after
        the turn it is kept with, by what the command said, not inside it."""
        return self.origin == "compact"


def said_by_its_fold(record: ActivityRecord) -> bool:
    """Whether ``record`` is a ``fold_session`` call that folded: its fold's row says the same
    (key and gist) and opens to what left, so the call has no row of its own. A refused call
    keeps its row: it made no fold."""
    return (
        record.tool == FOLD_TOOL
        and record.parent_id is None
        and record.state is ActivityState.SUCCEEDED
    )


def fold_line(fold: FoldInfo, *, expanded: bool = False) -> str:
    """The row's one line: what was folded (``turns 1–16``, not the model's key ``t1-t16``),
    who folded, and the start of the gist."""
    gist = " ".join(fold.gist.split())
    if len(gist) > PREVIEW:
        gist = gist[: PREVIEW - 1] + "…"
    marker = "▾" if expanded else "▸"
    what = fold_scope(fold.spans, fold.key)
    return f"{marker} ⋯ Folded {what}{FOLDED_BY.get(fold.origin, '')} · {gist or 'no gist'}"


def image_line(event: Any) -> str:
    """The person's image sent with the request (an ``ImageAttached`` event): its row."""
    from vis_core.model.images import describe

    shown = describe(event.name, event.media_type, event.size, event.width, event.height)
    return f"▣ {shown}"
