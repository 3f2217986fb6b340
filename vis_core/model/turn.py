"""How a turn ended (``TurnStatus``) and why an answer is not whole (``Incomplete``)."""

from __future__ import annotations

from enum import StrEnum


class TurnStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    MAX_ITERATIONS = "max_iterations"


class Incomplete(StrEnum):
    """Why an assistant text is not a whole answer."""

    NO = ""  # it is whole
    CUT = "max_tokens"  # the model reached its output limit mid-answer
    FAILED = "failed"  # the request failed while the answer streamed
    CANCELLED = "cancelled"  # the person cancelled the turn while the answer streamed
