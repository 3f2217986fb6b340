"""Child sessions that work for a session: ``run_session``, ``consult`` and ``vis.council``."""

from __future__ import annotations

from vis_core.subagents.service import SubagentDeps, Subagents

__all__ = ["SubagentDeps", "Subagents"]
