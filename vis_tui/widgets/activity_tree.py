"""Where an Activity row goes: calls an extension tool made sit under that tool's row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from vis_core.model.activity import CHILD_SESSION_TOOLS, ActivityRecord

Row = TypeVar("Row")


@dataclass(frozen=True)
class Placement(Generic[Row]):
    """The new row's depth, and the row to go ``before`` or ``after`` (neither: at the end)."""

    depth: int
    before: Row | None = None
    after: Row | None = None

    def index(self, rows: Sequence[Row]) -> int:
        """Where the new row goes in ``rows``."""
        if self.before is not None:
            return rows.index(self.before)
        if self.after is not None:
            return rows.index(self.after) + 1
        return len(rows)


def place(
    rows: Sequence[Row],
    record: ActivityRecord,
    *,
    find: Callable[[str], Row | None],
    depth_of: Callable[[Row], int],
    record_of: Callable[[Row], ActivityRecord],
) -> Placement[Row]:
    """Place a new row for ``record`` among ``rows`` (as shown). It goes after the calls its
    parent made so far; a tool whose row comes after calls it made (an end-only Activity)
    goes before the first of them. ``find`` is the row of a record id, if shown."""
    parent = find(record.parent_id) if record.parent_id else None
    depth = 0 if record.parent_id is None else (depth_of(parent) + 1 if parent is not None else 1)
    for row in rows:
        if record_of(row).parent_id == record.id:
            return Placement(depth, before=row)
    if parent is None:
        return Placement(depth)
    at = rows.index(parent) + 1
    while at < len(rows) and depth_of(rows[at]) > depth_of(parent):
        at += 1
    return Placement(depth, after=rows[at - 1])


def under_child_session(records: Sequence[ActivityRecord]) -> set[str]:
    """The ids of ``records`` made in a child session, under the ``run_session`` or
    ``consult`` call that started it (shown folded under that call's row)."""
    by_id = {record.id: record for record in records}
    folded: set[str] = set()
    for record in records:
        seen: set[str] = set()
        parent = by_id.get(record.parent_id or "")
        while parent is not None and parent.id not in seen:
            seen.add(parent.id)
            if parent.tool in CHILD_SESSION_TOOLS and parent.parent_id is None:
                folded.add(record.id)
                break
            parent = by_id.get(parent.parent_id or "")
    return folded
