"""A stored session read back from its event log in one pass: turns, answers, blocks, Activities."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from vis_core.model.notes import background_files_line, background_line, fold_scope
from vis_core.model.story import StoryKind
from vis_core.store.database import StoreError
from vis_core.store.interrupted import cut_off_endings

if TYPE_CHECKING:
    from pathlib import Path

    from vis_core.model.sessions import SessionRow
    from vis_core.store import Store

SNAPSHOT_FORMAT = "vis-session/1"  # what vis.sessions.export() returns and restore() reads


class SessionNotFound(LookupError):
    """No session, or more than one, answers to the id a person gave."""


@dataclass
class StoredBlock:
    """One tool call of the model: a ``python_execution`` block or a direct tool call."""

    iteration_id: str
    index: int
    tool: str
    code: str
    arguments: dict[str, Any]
    stdout: str = ""
    error: str | None = None
    finished: bool = False
    files: list[dict[str, Any]] = field(default_factory=list)
    activities: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class StoredTurn:
    """One turn: the request, what the model answered per request, and what ran."""

    id: str
    position: int
    request: str
    status: str = "running"
    error: str | None = None
    content: str = ""
    answers: dict[int, str] = field(default_factory=dict)  # request index -> its text
    thinking: dict[int, str] = field(default_factory=dict)
    blocks: list[StoredBlock] = field(default_factory=list)
    activities: list[dict[str, Any]] = field(default_factory=list)  # outside any block
    story: list[tuple[StoryKind, Any]] = field(default_factory=list)  # in order
    after: list[Aside] = field(default_factory=list)  # what happened after it, before the next


@dataclass(frozen=True)
class Aside:
    """What happened between turns, as the person saw it: ``/undo``, entering or leaving a
    draft, ``/compact``'s fold, a command left running that ended. ``title`` says what it
    was (``/undo``, ``Draft``, ``/compact``; empty: Vis's own note); ``text`` is Markdown."""

    title: str
    text: str


@dataclass
class StoredSession:
    row: SessionRow
    turns: list[StoredTurn]
    before: list[Aside] = field(default_factory=list)  # what happened before the first turn


def find_session(store: Store, key: str) -> SessionRow:
    """The session for an id or unambiguous prefix; :class:`SessionNotFound` names why not."""
    try:
        row = store.get_session(key)
    except StoreError as exc:
        raise SessionNotFound(str(exc)) from None
    if row is None:
        raise SessionNotFound(
            f"there is no session {key.strip()!r}; `vis sessions` lists the ids (a prefix must "
            "match exactly one)"
        )
    return row


def latest_session(store: Store, workspace: Path) -> SessionRow:
    """The session of ``workspace`` used last; :class:`SessionNotFound` when it has none."""
    row = store.latest_session(workspace)
    if row is None:
        raise SessionNotFound(f"there is no session in {workspace} yet; `vis` starts one")
    return row


_READ = (
    "TurnStarted",
    "AssistantMessage",
    "AssistantThinking",
    "IterationStarted",
    "BlockFinished",
    "TurnEnded",
    "UserContext",
    "DraftChanged",
    "FoldCreated",
    "BackgroundCommandEnded",
    "BackgroundFilesChanged",
    "ContextNote",
)
_ACTIVITIES = (  # the last state of each Activity, at the place of its first event
    "SELECT a.pos, e.data FROM activities AS a JOIN events AS e ON e.seq = a.seq "
    "WHERE a.session_id = ? ORDER BY a.pos"
)


def read_session(store: Store, row: SessionRow, *, cut_off: bool = False) -> StoredSession:
    """What the session's log holds, as turns with their blocks and Activities: the events
    that make them, and each Activity's last event only (one read of each). ``cut_off``: no
    Vis holds the session, so a turn still running was cut off (Vis was killed); it reads as
    the next Vis to open the session will end it, with what it showed until then."""
    with store._db.read("read a session's Activities") as conn:
        activities = conn.execute(_ACTIVITIES, (row.id,)).fetchall()
    turns: dict[str, StoredTurn] = {}
    blocks: dict[str, StoredBlock] = {}
    before: list[Aside] = []
    next_activity = 0
    for stored in store.events(row.id, types=_READ):
        while next_activity < len(activities) and activities[next_activity][0] < stored.seq:
            _activity(orjson.loads(activities[next_activity][1]), blocks, turns)
            next_activity += 1
        _event(orjson.loads(stored.data), turns, blocks, before)
    for _pos, data in activities[next_activity:]:
        _activity(orjson.loads(data), blocks, turns)
    if cut_off and any(turn.status == "running" for turn in turns.values()):
        for event in cut_off_endings(store, row.id):
            _event(event.to_dict(), turns, blocks, before)
    return StoredSession(row, sorted(turns.values(), key=lambda t: t.position), before)


def _aside(data: dict[str, Any], running: bool) -> Aside | None:
    """What ``data`` (an event) tells the person beside the turns, if anything: ``running``,
    a turn runs (a draft its tool entered is said by that call's Activity)."""
    kind = data.get("type")
    if kind == "UserContext" and data.get("origin") == "undo":
        return Aside("/undo", str(data.get("note") or data.get("text") or "/undo"))
    if kind == "DraftChanged" and not data.get("turn_id") and not running:
        return Aside("Draft", str(data.get("text") or data.get("action") or ""))
    if kind == "FoldCreated" and data.get("origin") == "compact":
        scope = fold_scope(data.get("spans") or (), str(data.get("key") or ""))
        gist = str(data.get("gist") or "").strip()
        text = f"Compacted {scope}: ~{int(data.get('removed_tokens') or 0):,} tokens left the "
        text += "model's context (the turns stay here)." + (f" Gist:\n\n{gist}" if gist else "")
        return Aside("/compact", text)
    if kind == "BackgroundCommandEnded" and not data.get("turn_id"):
        return Aside("", background_line(data))
    if kind == "BackgroundFilesChanged":  # one told in a turn too: after that turn
        return Aside("", _files_text(data))
    return None


def _files_text(data: dict[str, Any]) -> str:
    """The files a command left running changed, as Markdown: its line, each file, its diff."""
    marks = {"created": "+", "removed": "-", "changed": "~"}
    parts = [background_files_line(data)]
    for change in data.get("files") or []:
        kind = str(change.get("kind"))
        parts.append(f"{marks.get(kind, '~')} `{change.get('path', '')}` {kind}")
        if change.get("diff"):
            parts.append(f"```diff\n{str(change['diff']).rstrip()}\n```")
    return "\n\n".join(parts)


def _event(
    data: dict[str, Any],
    turns: dict[str, StoredTurn],
    blocks: dict[str, StoredBlock],
    before: list[Aside],
) -> None:
    kind = data.get("type")
    if kind == "TurnStarted":
        turn = StoredTurn(data["turn_id"], data.get("position", 0), data.get("request", ""))
        turns[turn.id] = turn
        return
    turn = turns.get(data.get("turn_id") or "")
    last = next(reversed(turns.values()), None)
    if (aside := _aside(data, last is not None and last.status == "running")) is not None:
        # after the turn it came after (the turn /compact folded last is the last one)
        (last.after if last is not None else before).append(aside)
        return
    if kind == "BlockFinished":
        block = blocks.get(data.get("iteration_id", ""))
        if block is not None:
            block.stdout, block.error = data.get("stdout", ""), data.get("error")
            block.files, block.finished = list(data.get("files") or []), True
    elif turn is None:
        return
    elif kind == "AssistantMessage":
        index = int(data.get("iteration", 0))
        turn.answers[index] = turn.answers.get(index, "") + data.get("text", "")
        turn.story.append((StoryKind.REPLY, data.get("text", "")))
    elif kind == "AssistantThinking":
        index = int(data.get("iteration", 0))
        turn.thinking[index] = turn.thinking.get(index, "") + data.get("text", "")
    elif kind == "IterationStarted":
        block = StoredBlock(
            data.get("iteration_id", ""),
            int(data.get("index", 0)),
            data.get("tool", ""),
            data.get("code", ""),
            data.get("arguments") or {},
        )
        blocks[block.iteration_id] = block
        turn.blocks.append(block)
        turn.story.append((StoryKind.CODE, block))
    elif kind == "TurnEnded":
        turn.status = str(data.get("status", ""))
        turn.error, turn.content = data.get("error"), data.get("content", "")
    elif kind == "DraftChanged" and data.get("text"):  # a mark in the turn (checks before it)
        turn.story.append((StoryKind.DRAFT, str(data["text"])))
    elif kind == "BackgroundCommandEnded":  # told to the model with this turn's request
        turn.story.append((StoryKind.BACKGROUND, data))
    elif kind == "ContextNote":
        turn.story.append((StoryKind.NOTE, data))


def _activity(
    data: dict[str, Any], blocks: dict[str, StoredBlock], turns: dict[str, StoredTurn]
) -> None:
    """Place an Activity (its last event's record) in its block, else in its turn."""
    item = data.get("activity")
    if not isinstance(item, dict):
        return
    block = blocks.get(item.get("iteration_id") or "")
    if block is not None:
        block.activities.append(item)
        return
    turn = turns.get(item.get("turn_id") or "")
    if turn is not None:
        turn.activities.append(item)
        turn.story.append((StoryKind.ACTIVITY, item))


def snapshot_head(row: SessionRow) -> dict[str, Any]:
    """The snapshot without its events: format and session row."""
    return {
        "format": SNAPSHOT_FORMAT,
        "session": {
            "id": row.id,
            "title": row.title,
            "group": row.group,
            "workspace": row.workspace,
            "project_root": row.project_root,
        },
    }


def snapshot(store: Store, row: SessionRow) -> dict[str, Any]:
    """The session as ``vis.sessions.export()`` gives it: its row and its event log."""
    data = snapshot_head(row)
    data["events"] = [orjson.loads(stored.data) for stored in store.events(row.id)]
    return data
