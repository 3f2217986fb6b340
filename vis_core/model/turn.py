"""How a turn ended (``TurnStatus``), why an answer is not whole (``Incomplete``), and where
text the person added for the model came from (``ContextOrigin``)."""

from __future__ import annotations

from enum import StrEnum


class TurnStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    MAX_ITERATIONS = "max_iterations"
    INCOMPLETE = "incomplete"  # the last answer was cut at the model's output limit


# A block's error when the person cancelled its turn (Esc): the turn's end says it already.
BLOCK_CANCELLED = "KeyboardInterrupt: the turn was cancelled"


class Incomplete(StrEnum):
    """Why an assistant text is not a whole answer."""

    NO = ""  # it is whole
    CUT = "max_tokens"  # the model reached its output limit mid-answer
    FAILED = "failed"  # the request failed while the answer streamed
    CANCELLED = "cancelled"  # the person cancelled the turn while the answer streamed
    INTERRUPTED = "interrupted"  # Vis stopped (killed, crashed) while the answer streamed


class ContextOrigin(StrEnum):
    """Where text the person added to the conversation came from."""

    FILE = "file"  # @path: the file's cat view
    SHELL = "shell"  # !command: what the command printed
    UNDO = "undo"  # /undo: which files were restored
    PLAN = "plan"  # plan mode: the model is told it plans (each turn), or that it ended
