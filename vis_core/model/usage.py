"""Token usage of a model request: ``Usage``, and why it was made: ``UsagePurpose``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class UsagePurpose(StrEnum):
    """Why a model request was made (``UsageReported.purpose``)."""

    CONVERSATION = ""  # a request of the conversation
    REJECTED = "rejected"  # a conversation request the provider refused as too long
    GIST = "gist"  # a side call Vis made itself: the gist of a fold
    SUBAGENT = "subagent"  # a child session's request, counted in its parent's cost

    @property
    def measures_context(self) -> bool:
        """Its size is the conversation's (a side call's or a child session's is not)."""
        return self not in (UsagePurpose.GIST, UsagePurpose.SUBAGENT)


@dataclass(frozen=True)
class Usage:
    """Token usage of one model request (or a sum of several)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write
