"""Drafts: isolated working copies a session works in until the person approves or discards."""

from __future__ import annotations

from vis_core.drafts.errors import DraftChanged, DraftConflict, DraftError
from vis_core.drafts.hooks import DraftHooks
from vis_core.drafts.service import Drafts

__all__ = [
    "DraftChanged",
    "DraftConflict",
    "DraftError",
    "DraftHooks",
    "Drafts",
]
