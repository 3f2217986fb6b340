"""Drafts: isolated working copies a session works in until the person approves or discards."""

from __future__ import annotations

from vis_core.drafts.errors import DraftChanged, DraftConflict, DraftError
from vis_core.drafts.hooks import NO_HOOKS, DraftHooks, DraftOp
from vis_core.drafts.service import Drafts

__all__ = [
    "NO_HOOKS",
    "DraftChanged",
    "DraftConflict",
    "DraftError",
    "DraftHooks",
    "DraftOp",
    "Drafts",
]
