"""``vis export``: a session stored in a real SQLite file as Markdown, HTML and JSON."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_support import vis

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    AssistantMessage,
    BlockFinished,
    ContextNote,
    IterationStarted,
    SessionCreated,
    TurnEnded,
    TurnStarted,
    UserContext,
)
from vis_core.model.activity import (
    ActivityPresentation,
    ActivityRecord,
    ActivityState,
    ActivityText,
    SymbolTag,
)
from vis_core.model.block import FileChange, FileChangeKind
from vis_core.model.turn import ContextOrigin, TurnStatus
from vis_core.paths import VisPaths
from vis_core.session_files import ExportFormat, export_session
from vis_core.settings.storage import SecretsFile
from vis_core.store import Store
from vis_core.store.stored_session import snapshot

SECRET = "sk-live-0123456789abcdef"
HOSTILE_REPLY = (
    "Done </script><script>alert(1)</script> <img src=x onerror=alert(2)> "
    "[click](javascript:alert(3)) \x1b]52;c;cHduZWQ=\x07 \u202eexe.py"
)


def _store_session(workspace: Path, *, title: str = "hostile session") -> tuple[Store, str]:
    """A session written as the loop writes one: a block with an Activity, hostile text, a
    secret the person saved only after it was recorded."""
    store = Store(VisPaths.from_env().ensure().db_file)
    row = store.create_session(workspace, workspace, title=title)
    sid, turn = row.id, "t1"
    activity = ActivityRecord(
        id="a1",
        session_id=sid,
        turn_id=turn,
        iteration_id="call_1",
        tool="grep",
        tag=SymbolTag.OBSERVATION,
        state=ActivityState.SUCCEEDED,
        presentation=ActivityPresentation(
            "Searched <b>files</b>",
            "3 matches",
            content=(ActivityText(f"evidence line <iframe src=//evil> token={SECRET}"),),
        ),
    )
    store.append_many(
        [
            SessionCreated(sid, title=title, workspace=str(workspace)),
            TurnStarted(sid, turn_id=turn, position=1, request="fix </textarea> the tests"),
            AssistantMessage(sid, turn_id=turn, iteration=0, text="Looking ```with fences```."),
            IterationStarted(
                sid, turn_id=turn, iteration_id="call_1", index=1, code="print('``` hi')"
            ),
            ActivityStarted(sid, activity=activity),
            ActivityEnded(sid, activity=activity),
            BlockFinished(
                sid,
                turn_id=turn,
                iteration_id="call_1",
                stdout=f"out \x1b[2J cleared; key {SECRET}\n",
                files=(FileChange("notes.txt", FileChangeKind.CREATED, "+hello\n", 1, 0),),
            ),
            AssistantMessage(sid, turn_id=turn, iteration=1, text=HOSTILE_REPLY),
            TurnEnded(sid, turn_id=turn, status=TurnStatus.COMPLETED, content=HOSTILE_REPLY),
        ]
    )
    SecretsFile(VisPaths.from_env().secrets_file).write("reports_token", SECRET)
    return store, sid


def test_markdown_holds_the_conversation_blocks_and_activities(workspace: Path) -> None:
    store, sid = _store_session(workspace)
    row = store.get_session(sid)
    assert row is not None
    text = export_session(store, row, ExportFormat.MD)
    assert "# hostile session" in text
    assert "> fix </textarea> the tests" in text
    assert "Looking ```with fences```." in text
    assert "````python\nprint('``` hi')\n````" in text  # a fence longer than the code's
    assert "- ✓ Searched <b>files</b> — 3 matches" in text
    assert "Files: +notes.txt" in text
    assert "out \\x1b[2J cleared" in text and "\x1b" not in text  # shown, not interpreted
    assert "<U+202E>exe.py" in text
    assert SECRET not in text and "key [REDACTED]" in text


def test_html_is_self_contained_and_every_text_inert(workspace: Path) -> None:
    store, sid = _store_session(workspace)
    row = store.get_session(sid)
    assert row is not None
    page = export_session(store, row, ExportFormat.HTML)
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", page))
    # only the page's own markup: no script, image, frame, link or form from any text
    assert tags <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p",
                    "code", "div", "strong", "pre", "details", "summary"}  # fmt: skip
    assert "javascript:" not in page.replace("[click](javascript:alert(3))", "")
    assert "href=" not in page and "src=" not in page.replace("src=x", "").replace("src=//", "")
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;iframe src=//evil&gt;" in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" not in page
    assert "default-src 'none'" in page
    # the evidence of the Activity and the diff are folded
    assert re.search(r"<details><summary>✓ Searched &lt;b&gt;files&lt;/b&gt; — 3 matches", page)
    assert "<details><summary>created notes.txt</summary><pre>+hello" in page
    assert "\x1b" not in page and "\\x1b]52;c;" in page
    assert SECRET not in page and "token=[REDACTED]" in page


@pytest.mark.parametrize("fmt", [ExportFormat.MD, ExportFormat.HTML])
def test_an_export_says_the_undo_after_a_turn(workspace: Path, fmt: ExportFormat) -> None:
    """``/undo`` after turn 1 was only in the JSON export: Markdown and HTML listed turn 1's
    files as if they stood. Both say the undo now, after the turn it undid."""
    store, sid = _store_session(workspace)
    note = "Undid the file changes of turn 1\n- deleted `notes.txt` (created by the turn)"
    store.append_many(
        [UserContext(sid, origin=ContextOrigin.UNDO, title="/undo", text="[Vis: …]", note=note)]
    )
    row = store.get_session(sid)
    assert row is not None
    text = export_session(store, row, fmt)
    assert "Undid the file changes of turn 1" in text
    assert text.index("Undid the file changes") > text.index("notes.txt")
    assert "deleted `notes.txt` (created by the turn)" in text


@pytest.mark.parametrize("fmt", [ExportFormat.MD, ExportFormat.HTML])
def test_an_export_says_what_vis_told_the_model(workspace: Path, fmt: ExportFormat) -> None:
    """The app shows "⋯ Vis told the model: …" where a note went with a request, and the JSON
    export has the note; Markdown and HTML left it out. They say it now, the hint whole."""
    store, sid = _store_session(workspace)
    hint = (
        "[Vis: Context is at 92% of the soft budget (185,000 of 200,000 input tokens). Fold "
        'settled work before the next answer: fold_session("-t1", gist) folds every earlier '
        'turn not folded yet. session["utilization"] has the numbers.]'
    )
    store.append_many(
        [
            TurnStarted(sid, turn_id="t2", position=2, request="go on"),
            ContextNote(sid, turn_id="t2", topic="utilization", text=hint),
            ContextNote(sid, turn_id="t2", topic="mcp_servers", text="[Vis: MCP servers …]"),
            TurnEnded(sid, turn_id="t2", status=TurnStatus.COMPLETED),
        ]
    )
    row = store.get_session(sid)
    assert row is not None
    text = export_session(store, row, fmt).replace("&quot;", '"')
    told = "⋯ Vis told the model: Context is at 92% of the soft budget (185,000 of 200,000"
    assert told in text
    assert 'fold_session("-t1", gist) folds every earlier turn not folded yet.' in text
    assert "⋯ Vis told the model the MCP servers section changed" in text
    assert text.index(told) > text.index("go on")  # in the turn whose request carried it


def test_json_is_the_sessions_api_snapshot_with_secrets_redacted(workspace: Path) -> None:
    store, sid = _store_session(workspace)
    row = store.get_session(sid)
    assert row is not None
    text = export_session(store, row, ExportFormat.JSON)
    assert SECRET not in text
    data = json.loads(text)
    expected = json.loads(json.dumps(snapshot(store, row)).replace(SECRET, "[REDACTED]"))
    assert data == expected
    assert data["format"] == "vis-session/1" and len(data["events"]) == 9
    assert "\u202e" not in text and "\\u202e" in text  # the same JSON value, escaped


def test_vis_export_cli_writes_files_and_names_bad_ids(workspace: Path, vis_home: Path) -> None:
    store, sid = _store_session(workspace)
    ids = [store.create_session(workspace, workspace).id for _ in range(16)] + [sid]
    shared = next(i[0] for i in ids if sum(j[0] == i[0] for j in ids) > 1)  # 17 ids, 16 digits
    store.close()
    shown = vis("export", sid[:12], cwd=workspace, env_home=vis_home)
    assert shown.returncode == 0, shown.stderr
    assert "## Turn 1" in shown.stdout and "\x1b" not in shown.stdout
    assert SECRET not in shown.stdout

    out = workspace / "s.html"
    written = vis("export", sid, "-o", str(out), cwd=workspace, env_home=vis_home)
    assert written.returncode == 0, written.stderr
    assert str(out) in written.stdout and "(html)" in written.stdout
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert out.stat().st_mode & 0o077 == 0

    pipe = workspace / "pipe.md"  # what a block can leave where a file is expected
    os.mkfifo(pipe)
    held = vis("export", sid, "-o", str(pipe), cwd=workspace, env_home=vis_home)
    assert held.returncode == 2 and "a named pipe, not a regular file" in held.stderr

    as_json = vis("export", sid, "--format", "json", cwd=workspace, env_home=vis_home)
    assert json.loads(as_json.stdout)["session"]["id"] == sid

    unknown = vis("export", "feedbeef", cwd=workspace, env_home=vis_home)
    assert unknown.returncode == 2
    assert "no session 'feedbeef'" in unknown.stderr and "vis sessions" in unknown.stderr
    ambiguous = vis("export", shared, cwd=workspace, env_home=vis_home)
    assert ambiguous.returncode == 2
    assert "matches more than one session" in ambiguous.stderr


def test_vis_export_without_an_id_writes_the_workspaces_latest_session(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    store, sid = _store_session(workspace)
    store.close()
    latest = vis("export", "--format", "json", cwd=workspace, env_home=vis_home)
    assert latest.returncode == 0, latest.stderr
    assert json.loads(latest.stdout)["session"]["id"] == sid
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    none = vis("export", cwd=elsewhere, env_home=vis_home)
    assert (none.returncode, none.stdout) == (2, "")
    assert f"no session in {elsewhere.resolve()} yet" in none.stderr


def test_an_export_cleans_a_turn_or_an_event_at_a_time(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Markdown export redacted and escaped its whole text at once, the JSON export its
    whole body: each a C call over megabytes that held the GIL, and ``/export`` froze the
    app's loop (143 ms for 2,000 turns, bench/loop_stalls.py). They clean a turn, or an
    event, at a time now; the text is the same."""
    import vis_core.session_files as session_files

    store, sid = _store_session(workspace)
    for n in (2, 3):
        store.append_many(
            [
                TurnStarted(sid, turn_id=f"t{n}", position=n, request=f"again {SECRET}"),
                AssistantMessage(sid, turn_id=f"t{n}", iteration=0, text=HOSTILE_REPLY),
                TurnEnded(sid, turn_id=f"t{n}", status=TurnStatus.COMPLETED, content="ok"),
            ]
        )
    row = store.get_session(sid)
    assert row is not None
    cleaned: list[str] = []
    escape, escape_json = session_files.terminal_text, session_files.terminal_json

    def watched(text: str) -> str:
        cleaned.append(text)
        return escape(text)

    def watched_json(text: str) -> str:
        cleaned.append(text)
        return escape_json(text)

    monkeypatch.setattr(session_files, "terminal_text", watched)
    monkeypatch.setattr(session_files, "terminal_json", watched_json)
    markdown = export_session(store, row, ExportFormat.MD)
    assert markdown.count("## Turn") == 3 and markdown.count("[REDACTED]") == 3
    assert "\x1b" not in markdown and "<U+202E>exe.py" in markdown
    assert max(text.count("## Turn") for text in cleaned) == 1
    cleaned.clear()
    body = export_session(store, row, ExportFormat.JSON)
    assert SECRET not in body and "\u202e" not in body and "\\u202e" in body
    assert len(cleaned) > 3 and not any("\n" in text for text in cleaned)
