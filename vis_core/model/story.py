"""The parts of a stored turn's story, in the order it showed them."""

from __future__ import annotations

from enum import StrEnum


class StoryKind(StrEnum):
    """What one entry of a stored turn's story is (``History.turn_story``, an export)."""

    REPLY = "reply"  # an answer's text
    THINKING = "thinking"  # the model's reasoning
    CODE = "code"  # a ``python_execution`` block: its code and how it ended
    BLOCK = "block"  # a call that failed or restarted the sandbox
    FOLD = "fold"  # a fold made in the turn
    BACKGROUND = "background"  # a command left running that reported its end
    DRAFT = "draft"  # entering or leaving a draft
    NOTE = "note"  # what Vis told the model with a request (the budget's hint, MCP changes)
    ACTIVITY = "activity"  # one Activity
