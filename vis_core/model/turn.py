"""How a turn ended: ``TurnStatus``."""

from __future__ import annotations

from enum import StrEnum


class TurnStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    MAX_ITERATIONS = "max_iterations"
