"""Holding a store's write lock from another connection (another Vis, a slow disk)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """Another connection holds the database's write lock: the store writer's commit waits,
    or fails after its busy timeout."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()
