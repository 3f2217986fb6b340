"""The read side of folds: each fold of a session with its measurement, oldest first."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vis_core.store.database import Database


class MeasurementStatus(StrEnum):
    """Where a fold's ``fold_measurement`` stands."""

    PENDING = "pending"
    MEASURED = "measured"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class FoldRow:
    """One stored fold and the measurement of the request after it."""

    id: str
    session_id: str
    turn_id: str
    key: str
    gist: str
    spans: tuple[tuple[int, int, int], ...]
    origin: str
    removed_tokens: int
    model: str
    status: MeasurementStatus
    reason: str | None
    before_input_tokens: int | None
    after_input_tokens: int | None
    fold_count: int | None
    created: float

    def measurement(self) -> dict[str, Any]:
        """``fold_measurement`` as request health reports it."""
        data: dict[str, Any] = {"status": self.status.value}
        if self.status is MeasurementStatus.MEASURED:
            before, after = self.before_input_tokens or 0, self.after_input_tokens or 0
            data.update(
                before_input_tokens=before,
                after_input_tokens=after,
                net_reduction_tokens=before - after,
                fold_count=self.fold_count,
            )
        elif self.status is MeasurementStatus.UNAVAILABLE:
            data.update(reason=self.reason, fold_count=self.fold_count)
        return data


_COLUMNS = (
    "id, session_id, turn_id, key, gist, spans, origin, removed_tokens, model, status, reason, "
    "before_input_tokens, after_input_tokens, fold_count, created"
)


def _row(row: tuple[Any, ...]) -> FoldRow:
    spans = tuple(tuple(int(v) for v in span) for span in json.loads(row[5]))
    return FoldRow(
        *row[:5],
        spans=spans,  # type: ignore[arg-type]
        origin=row[6],
        removed_tokens=row[7],
        model=row[8],
        status=MeasurementStatus(row[9]),
        reason=row[10],
        before_input_tokens=row[11],
        after_input_tokens=row[12],
        fold_count=row[13],
        created=row[14],
    )


class FoldsMixin:
    """``folds(session_id)``: the session's folds in the order they were made."""

    _db: Database

    def folds(self, session_id: str) -> list[FoldRow]:
        with self._db.read("read folds") as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM folds WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        return [_row(row) for row in rows]
