"""The Vis database: sessions, the event log and its projections, and per-extension data."""

from __future__ import annotations

from vis_core.events import StoredEvent
from vis_core.model.sessions import SearchHit, SessionRow, TurnRow
from vis_core.store.database import StoreError
from vis_core.store.rows import (
    ActivityPage,
    AttachmentRow,
    BlockRow,
    GroupRow,
    IterationRow,
    OverrideRow,
    OverrideScope,
    PromptRow,
)
from vis_core.store.schema import APPLICATION_ID, SCHEMA_VERSION
from vis_core.store.store import Store

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "ActivityPage",
    "AttachmentRow",
    "BlockRow",
    "GroupRow",
    "IterationRow",
    "OverrideRow",
    "OverrideScope",
    "PromptRow",
    "SearchHit",
    "SessionRow",
    "Store",
    "StoreError",
    "StoredEvent",
    "TurnRow",
]
