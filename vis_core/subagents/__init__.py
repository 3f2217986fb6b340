"""Child sessions that work for a session: ``run_session``, ``consult`` and ``vis.council``."""

from __future__ import annotations

from vis_core.subagents.mirror import CHILD_PURPOSE
from vis_core.subagents.service import (
    READ_ONLY_STATE,
    SubagentDeps,
    SubagentError,
    SubagentLimitError,
    Subagents,
)

__all__ = [
    "CHILD_PURPOSE",
    "READ_ONLY_STATE",
    "SubagentDeps",
    "SubagentError",
    "SubagentLimitError",
    "Subagents",
]
