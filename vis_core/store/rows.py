"""Frozen row types the store returns, and their builders from SQLite rows."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vis_core.model.attachments import Audience
from vis_core.model.sessions import SessionRow, TurnRow
from vis_core.model.turn import TurnStatus
from vis_core.model.usage import Usage


class OverrideScope(StrEnum):
    """Settings scopes kept in the database (global and project live in files)."""

    GROUP = "group"
    SESSION = "session"


@dataclass(frozen=True)
class GroupRow:
    """A session group."""

    name: str
    created: float


SESSION_COLUMNS = (
    "s.id, s.title, s.group_name, s.workspace, s.project_root, s.created, s.modified, "
    "s.forked_from, s.input_tokens, s.output_tokens, s.cache_read_tokens, s.cache_write_tokens, "
    "s.cost, (SELECT count(*) FROM turns t WHERE t.session_id = s.id), s.parent_id"
)


def session_row(row: tuple[Any, ...]) -> SessionRow:
    return SessionRow(
        id=row[0],
        title=row[1],
        group=row[2],
        workspace=row[3],
        project_root=row[4],
        created=row[5],
        modified=row[6],
        forked_from=row[7],
        usage=Usage(row[8], row[9], row[10], row[11]),
        cost=row[12],
        turn_count=row[13],
        parent_id=row[14],
    )


TURN_COLUMNS = (
    "id, session_id, position, request, status, content, input_tokens, output_tokens, "
    "cache_read_tokens, cache_write_tokens, cost, error, started, ended"
)


def turn_row(row: tuple[Any, ...], replies: tuple[str, ...] = ()) -> TurnRow:
    return TurnRow(
        id=row[0],
        session_id=row[1],
        position=row[2],
        request=row[3],
        status=TurnStatus(row[4]),
        content=row[5],
        usage=Usage(row[6], row[7], row[8], row[9]),
        cost=row[10],
        error=row[11],
        started=row[12],
        ended=row[13],
        replies=replies,
    )


@dataclass(frozen=True)
class BlockRow:
    """The outcome of one block an iteration ran."""

    iteration_id: str
    stdout: str
    error: str | None
    restarted: bool
    duration: float


@dataclass(frozen=True)
class IterationRow:
    """One model call of a turn and the code it ran."""

    id: str
    turn_id: str
    index: int
    tool: str
    code: str
    arguments: dict[str, Any]
    started: float
    blocks: tuple[BlockRow, ...] = ()


@dataclass(frozen=True)
class PromptRow:
    """One request in the prompt history."""

    id: int
    session_id: str
    text: str
    created: float


@dataclass(frozen=True)
class AttachmentRow:
    """A file kept with a session."""

    id: str
    session_id: str
    iteration_id: str | None
    filename: str
    version: int
    media_type: str
    kind: str
    size: int
    path: str
    audience: Audience
    commentable: bool
    label: str
    created: float


ATTACHMENT_COLUMNS = (
    "id, session_id, iteration_id, filename, version, media_type, kind, size, path, audience, "
    "commentable, label, created"
)


def attachment_row(row: tuple[Any, ...]) -> AttachmentRow:
    return AttachmentRow(
        *row[:9],
        audience=Audience(row[9]),
        commentable=bool(row[10]),
        label=row[11],
        created=row[12],
    )
