"""The Vis database: sessions, the event log and its projections, and per-extension data."""

from __future__ import annotations

from vis_core.store.database import StoreError
from vis_core.store.store import Store

__all__ = ["Store", "StoreError"]
