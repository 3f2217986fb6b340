"""``vis export`` and ``/export``: a stored session as Markdown, self-contained HTML or JSON.

Every text comes from the model, tools or files, so it is untrusted: saved secrets are
redacted, control characters are shown escaped (Markdown is read in terminals), and in HTML
every text is escaped and nothing is rendered as markup (no script, link or image can act).
"""

from __future__ import annotations

import errno
import html
import os
import re
import stat
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from vis_core.events import ContextNote
from vis_core.model.activity import from_plain, outcome_failed, receipts_of
from vis_core.model.block import PYTHON_EXECUTION
from vis_core.model.notes import background_line
from vis_core.model.story import StoryKind
from vis_core.model.turn import TurnStatus
from vis_core.store.stored_session import (
    Aside,
    StoredBlock,
    StoredSession,
    StoredTurn,
    read_session,
    snapshot_head,
)
from vis_core.system.redaction import Redactor, log_redactors
from vis_core.terminal import terminal_json, terminal_text
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.model.sessions import SessionRow
    from vis_core.store import Store


class ExportFormat(StrEnum):
    MD = "md"
    HTML = "html"
    JSON = "json"


FORMATS = tuple(f.value for f in ExportFormat)
_STATE_MARK = {"succeeded": "✓", "failed": "✗", "running": "…", "cancelled": "⊘"}


def format_for_path(path: Path | str) -> ExportFormat:
    """The format a file name asks for by its suffix (``.htm(l)``, ``.json``, else Markdown)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix in ("html", "htm"):
        return ExportFormat.HTML
    if suffix == "json":
        return ExportFormat.JSON
    return ExportFormat.MD


def default_file_name(session_id: str, fmt: ExportFormat) -> str:
    return f"vis-session-{session_id[:8]}.{fmt.value}"


def export_session(
    store: Store, row: SessionRow, fmt: ExportFormat, *, cut_off: bool = False
) -> str:
    """The session in ``fmt``, secrets redacted and control characters made visible;
    ``cut_off``: no Vis holds it, so a turn still running was cut off (see
    :func:`read_session`)."""
    redactors = log_redactors()
    if fmt is ExportFormat.JSON:
        return _json(store, row, redactors)
    session = read_session(store, row, cut_off=cut_off)
    clean = _cleaner(redactors)
    if fmt is ExportFormat.HTML:
        return _html(session, clean)
    return _markdown(session, clean)


def write_export(path: Path, text: str, root: Path | None = None) -> Path:
    """Write ``text`` to ``path`` (0600, replacing a file's content). A link as the last name
    is refused, and so is a named pipe or a device, never waited on. With ``root`` (the
    workspace, which the model's code may change), ``path`` is relative to it and resolved
    beneath it: a link on the way that leads out is refused, not followed."""
    from vis_core.tools.beneath import Beneath

    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        if root is None:
            fd = os.open(path, flags, 0o600)
        else:
            fd = Beneath(root).open(path, flags, 0o600)[0]
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a pipe nobody reads: opening it would wait for one
            raise OSError(errno.ENXIO, "a named pipe, not a regular file") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as stream:
            stream.write(text)
    finally:
        os.close(fd)
    return path


def _cleaner(redactors: list[Redactor]) -> Callable[[str], str]:
    """Saved secrets redacted, control characters escaped."""

    def clean(text: str) -> str:
        for redactor in redactors:
            text = redactor.text(text)
        return terminal_text(text)

    return clean


# -- text of an Activity -------------------------------------------------------------------


def _content_text(item: Any) -> str:
    """One evidence view of an Activity (its plain ``kind`` dict) as text."""
    if not isinstance(item, dict):
        return str(item)
    kind = item.get("kind", "")
    if kind in ("ActivityText", "ActivityHeading"):
        return str(item.get("text", ""))
    if kind == "ActivityMarkdown":
        return str(item.get("markdown", ""))
    if kind == "ActivityCode":
        return str(item.get("code", ""))
    if kind == "ActivityDiff":
        return str(item.get("diff", ""))
    if kind == "ActivityTable":
        rows = [item.get("headers") or [], *(item.get("rows") or [])]
        return "\n".join(" | ".join(str(cell) for cell in row) for row in rows)
    if kind == "ActivityTerminal":
        stages = " ".join(str(a) for a in item.get("command") or [])
        lines = [f"$ {item.get('command_text') or stages}"]
        lines += [str(line.get("text", "")) for line in item.get("lines") or []]
        if item.get("exit") is not None:
            lines.append(f"[exit {item['exit']}]")
        return "\n".join(lines)
    if kind == "ActivityProgress":
        total = item.get("total")
        return f"{item.get('label', '')} {item.get('completed')}/{total if total else '?'}".strip()
    if "attachment" in item:
        return f"[{kind.removeprefix('Activity').lower()} {item['attachment']}] " + str(
            item.get("caption", "")
        )
    return " ".join(str(v) for k, v in item.items() if k != "kind" and isinstance(v, str))


def activity_line(record: dict[str, Any]) -> str:
    """``✓ headline — summary`` of an Activity (the tool's name when it shows none)."""
    shown = record.get("presentation") or {}
    headline = shown.get("headline") or record.get("tool", "")
    summary = shown.get("summary") or ""
    mark = _STATE_MARK.get(_shown_state(record), "·")
    line = f"{mark} {headline}" + (f" — {summary}" if summary else "")
    if record.get("error"):
        line += f" (error: {record['error']})"
    return line


def _shown_state(record: dict[str, Any]) -> str:
    """The stored state, failed when the call returned but its outcome failed (a command
    that exited non-zero), as the app shows it."""
    state, shown = str(record.get("state")), record.get("presentation")
    if state == "succeeded" and shown:
        try:
            return "failed" if outcome_failed(from_plain(shown)) else state
        except (TypeError, ValueError):  # stored by another version: its state as stored
            pass
    return state


def _evidence(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(title, text) of each evidence view of an Activity, its sections' too."""
    shown = record.get("presentation") or {}
    views = [("", _content_text(item)) for item in shown.get("content") or []]
    for section in shown.get("sections") or []:
        title = f"{section.get('headline', '')} — {section.get('summary', '')}".strip(" —")
        text = "\n".join(_content_text(item) for item in section.get("content") or [])
        views.append((title, text))
    return [(title, text) for title, text in views if text.strip() or title]


Entry = tuple[dict[str, Any], tuple[dict[str, Any], ...]]  # the newest call, earlier ones listed


def _entries(turn: StoredTurn) -> dict[str, Entry | None]:
    """The entry of each Activity of ``turn`` by its id, one per row the app shows: calls on
    one handle (a command started, then waited on) are one entry, at the first call, showing
    the newest with the earlier calls it lists (:func:`receipts_of`); a later call on a
    handle has none (its handle's entry says it). Listed one by one, a command showed as
    "✓ … running (pid N)" and then "✗ … exit 1"."""
    records = [
        record
        for kind, value in turn.story
        if kind in (StoryKind.CODE, StoryKind.ACTIVITY)
        for record in (value.activities if kind is StoryKind.CODE else [value])
    ]
    calls: dict[Any, list[dict[str, Any]]] = {}
    for record in records:
        handle = record.get("handle_id")
        key = (record.get("owner"), record.get("form"), handle) if handle else record.get("id")
        calls.setdefault(key, []).append(record)
    entries: dict[str, Entry | None] = {}
    for group in calls.values():
        entries.update((str(later.get("id")), None) for later in group[1:])
        receipts = receipts_of(group, lambda record: str(record.get("tool", "")))
        entries[str(group[0].get("id"))] = (group[-1], receipts)
    return entries


def _told_model(data: dict[str, Any]) -> str:
    """What Vis told the model (a stored ``ContextNote``) as the transcript's line says it,
    but whole: an export has room for the hint's fold key."""
    text = str(data.get("text") or "")
    note = ContextNote(str(data.get("session_id") or ""), topic=str(data.get("topic")), text=text)
    return f"⋯ {note.summary(max(len(text), 160))}"


# the one-line notes of a turn's story, as the transcript shows them
_NOTES: dict[StoryKind, Callable[[Any], str]] = {
    StoryKind.DRAFT: lambda text: f"✎ {text}",
    StoryKind.BACKGROUND: background_line,
    StoryKind.NOTE: _told_model,
}


def _files_line(block: StoredBlock) -> str:
    marks = {"created": "+", "removed": "-", "changed": "~"}
    return " ".join(f"{marks.get(str(f.get('kind')), '~')}{f.get('path', '')}" for f in block.files)


# -- Markdown ------------------------------------------------------------------------------


def _fence(text: str, language: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    ticks = "`" * (longest + 1)
    return f"{ticks}{language}\n{text.rstrip(chr(10))}\n{ticks}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def _markdown(session: StoredSession, clean: Callable[[str], str]) -> str:
    """The session as Markdown, ``clean`` applied a turn at a time: over the whole text at
    once, each of its C calls held the GIL, and the app's loop, for up to 150 ms."""
    row = session.row
    head = [
        f"# {row.title or 'Untitled session'}",
        "",
        f"- Session: `{row.id}`",
        f"- Workspace: `{row.workspace}`",
        f"- Turns: {len(session.turns)}",
        "",
    ]
    for aside in session.before:
        head += _markdown_aside(aside)
    parts = [clean("\n".join(head))]
    for turn in session.turns:
        out: list[str] = []
        _markdown_turn(turn, out)
        parts.append(clean("\n".join(out)))
    return "\n".join(parts) + "\n"


def _markdown_turn(turn: StoredTurn, out: list[str]) -> None:
    status = "" if turn.status == TurnStatus.COMPLETED else f" ({turn.status})"
    out += [f"## Turn {turn.position}{status}", "", "**You:**", "", _quote(turn.request), ""]
    entries = _entries(turn)
    for kind, value in turn.story:
        if kind is StoryKind.REPLY:
            out += ["**Vis:**", "", value, ""]
        elif kind is StoryKind.ACTIVITY and (entry := entries.get(str(value.get("id")))):
            out += [*_markdown_entry(entry), ""]
        elif kind is StoryKind.CODE:
            _markdown_block(value, entries, out)
        elif kind in _NOTES:
            out += [_NOTES[kind](value), ""]
    if turn.error:
        out += [f"**Error:** {turn.error}", ""]
    for aside in turn.after:
        out += _markdown_aside(aside)


def _markdown_aside(aside: Aside) -> list[str]:
    if not aside.title:
        return [aside.text, ""]
    return [f"**{aside.title}:**", "", _quote(aside.text), ""]


def _markdown_entry(entry: Entry) -> list[str]:
    newest, receipts = entry
    earlier = [f"  - earlier on this handle: {activity_line(record)}" for record in receipts]
    return [f"- {activity_line(newest)}", *earlier]


def _markdown_block(block: StoredBlock, entries: dict[str, Entry | None], out: list[str]) -> None:
    if block.tool == PYTHON_EXECUTION:
        out += [f"### Block {block.index}", "", _fence(block.code, "python"), ""]
    else:
        arguments = orjson.dumps(block.arguments, option=orjson.OPT_INDENT_2).decode()
        out += [f"### Tool call {block.index}: `{block.tool}`", "", _fence(arguments, "json"), ""]
    shown = [entry for record in block.activities if (entry := entries.get(str(record.get("id"))))]
    out += [line for entry in shown for line in _markdown_entry(entry)]
    if shown:
        out.append("")
    if block.stdout:
        out += ["Output:", "", _fence(block.stdout, "text"), ""]
    if block.error:
        out += ["Error:", "", _fence(block.error, "text"), ""]
    if block.files:
        out += [f"Files: {_files_line(block)}", ""]


# -- HTML ----------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f;background:#fff}
pre,.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{background:#f5f5f7;padding:.6rem;border-radius:4px;font-size:.85rem}
.you{border-left:3px solid #4a7;padding-left:.6rem}
.error{color:#b00}
details{margin:.2rem 0 .2rem 1rem}
summary{cursor:pointer}
h2{border-top:1px solid #ddd;padding-top:1rem}
"""
# No script, no request anywhere: what an exported page shows it holds in itself.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"


def _html(session: StoredSession, clean: Callable[[str], str]) -> str:
    def esc(text: str) -> str:
        return html.escape(clean(text), quote=True)

    row = session.row
    title = esc(row.title or "Untitled session")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{title}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        f"<p>Session <code>{esc(row.id)}</code> · workspace <code>{esc(row.workspace)}</code>"
        f" · {plural(len(session.turns), 'turn')}</p>",
        *(_html_aside(aside, esc) for aside in session.before),
    ]
    for turn in session.turns:
        status = "" if turn.status == TurnStatus.COMPLETED else f" ({esc(turn.status)})"
        out.append(f"<h2>Turn {turn.position}{status}</h2>")
        out.append(f'<div class="you text"><strong>You:</strong>\n{esc(turn.request)}</div>')
        entries = _entries(turn)
        for kind, value in turn.story:
            if kind is StoryKind.REPLY:
                out.append(f'<div class="text"><strong>Vis:</strong>\n{esc(value)}</div>')
            elif kind is StoryKind.ACTIVITY and (entry := entries.get(str(value.get("id")))):
                out.append(_html_activity(entry, esc))
            elif kind is StoryKind.CODE:
                out.append(_html_block(value, entries, esc))
            elif kind in _NOTES:
                out.append(f'<p class="text">{esc(_NOTES[kind](value))}</p>')
        if turn.error:
            out.append(f'<p class="error">Error: {esc(turn.error)}</p>')
        out += [_html_aside(aside, esc) for aside in turn.after]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _html_aside(aside: Aside, esc: Callable[[str], str]) -> str:
    if not aside.title:
        return f'<p class="text">{esc(aside.text)}</p>'
    return f'<div class="you text"><strong>{esc(aside.title)}:</strong>\n{esc(aside.text)}</div>'


def _html_activity(entry: Entry, esc: Callable[[str], str]) -> str:
    newest, receipts = entry
    views = _evidence(newest)
    line = esc(activity_line(newest))
    if not views and not receipts:
        return f"<div>{line}</div>"
    inner = "".join(
        (f"<p>{esc(title)}</p>" if title else "") + f"<pre>{esc(text)}</pre>"
        for title, text in views
    )
    if receipts:
        inner += "<p>Earlier on this handle</p>"
        inner += "".join(f"<div>{esc(activity_line(record))}</div>" for record in receipts)
    return f"<details><summary>{line}</summary>{inner}</details>"


def _html_block(
    block: StoredBlock, entries: dict[str, Entry | None], esc: Callable[[str], str]
) -> str:
    if block.tool == PYTHON_EXECUTION:
        parts = [f"<h3>Block {block.index}</h3><pre>{esc(block.code)}</pre>"]
    else:
        arguments = orjson.dumps(block.arguments, option=orjson.OPT_INDENT_2).decode()
        parts = [
            f"<h3>Tool call {block.index}: <code>{esc(block.tool)}</code></h3>",
            f"<pre>{esc(arguments)}</pre>",
        ]
    parts += [
        _html_activity(entry, esc)
        for record in block.activities
        if (entry := entries.get(str(record.get("id"))))
    ]
    if block.stdout:
        parts.append(f"<p>Output:</p><pre>{esc(block.stdout)}</pre>")
    if block.error:
        parts.append(f'<p class="error">Error:</p><pre>{esc(block.error)}</pre>')
    for change in block.files:
        name = esc(f"{change.get('kind', '')} {change.get('path', '')}")
        diff = str(change.get("diff") or change.get("note") or "")
        parts.append(
            f"<details><summary>{name}</summary><pre>{esc(diff)}</pre></details>"
            if diff
            else f"<div>{name}</div>"
        )
    return "\n".join(parts)


# -- JSON ----------------------------------------------------------------------------------


def _json(store: Store, row: SessionRow, redactors: list[Redactor]) -> str:
    """The sessions API's snapshot (``vis.sessions.export()``), one event a line, secrets
    redacted in every string, safe for a terminal. An event that holds no secret is copied
    as it is stored, not decoded."""
    head = snapshot_head(row)
    head["session"] = _redacted(head["session"], redactors)
    lines = []
    for stored in store.events(row.id):
        text = stored.data
        if any(redactor.in_json(text) for redactor in redactors):
            text = orjson.dumps(_redacted(orjson.loads(text), redactors)).decode()
        lines.append(terminal_json(text))  # a line at a time: the loop runs between two
    opening = terminal_json(orjson.dumps(head).decode()[:-1])
    return opening + ',"events":[\n' + ",\n".join(lines) + "\n]}\n"


def _redacted(value: Any, redactors: list[Redactor]) -> Any:
    for redactor in redactors:
        value = redactor.value(value)
    return value
