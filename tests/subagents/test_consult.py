"""``consult``: another stored session answers in a fork of itself; the original never changes."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

from vis_core.events import ActivityEnded, BlockFinished, Event

from .support import open_host, script

ASK = textwrap.dedent(
    """\
    rows = [s for s in await list_sessions() if s["title"].startswith("investigate")]
    found = await consult(rows[0], "what did you find about the flaky test?")
    print(found["title"], "|", found["answer"], "|", found["session_id"] == rows[0]["id"])
    """
)


def _rows_of(db: Path, session_id: str) -> dict[str, list[tuple]]:
    """Every stored row of ``session_id``, table by table, as the database holds it."""
    with sqlite3.connect(db) as conn:
        tables = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if "session_id" in [c[1] for c in conn.execute(f"PRAGMA table_info({name})")]
        ]
        rows = {
            t: conn.execute(f"SELECT * FROM {t} WHERE session_id = ?", (session_id,)).fetchall()
            for t in tables
        }
        rows["sessions"] = conn.execute(
            "SELECT * FROM sessions WHERE id = ?", (session_id,)
        ).fetchall()
    return rows


async def test_consult_answers_in_a_fork_and_leaves_the_original_as_it_was(
    workspace: Path, tmp_path: Path
):
    (workspace / "test_x.py").write_text("def test_x():\n    assert True\n", encoding="utf-8")
    path = script(
        tmp_path / "s.yaml",
        [{"code": ASK}, {"text": "the other session knew"}],
        {
            "investigate the flaky test": [
                {"code": 'print(await cat("test_x.py"))'},
                {"text": "test_x depends on the clock"},
            ],
            "what did you find about the flaky test": [
                {"code": 'print(await grep("clock", "."))'},
                {"text": "it depends on the clock; test_x.py no longer does"},
            ],
        },
    )
    host = await open_host(workspace, path)
    events: list[Event] = []
    try:
        source = await host.new_session()
        await source.submit("investigate the flaky test")
        await host.close_session(source)
        before = _rows_of(host.paths.db_file, source.id)

        parent = await host.new_session()
        parent.subscribe(events.append)
        ended = await parent.submit("ask the other session")
        forks = host.store.children(parent.id)
        after = _rows_of(host.paths.db_file, source.id)
    finally:
        await host.close()

    assert ended.status.value == "completed", ended.error
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    assert block.stdout.strip() == (
        "investigate the flaky test | it depends on the clock; test_x.py no longer does | True"
    )
    (call,) = [
        e.activity
        for e in events
        if isinstance(e, ActivityEnded) and e.activity and e.activity.tool == "consult"
    ]
    assert call.presentation is not None and "{" not in call.presentation.summary
    assert call.presentation.summary.startswith("investigate the flaky test · ")
    assert after == before  # the consulted session is byte-identical in the store
    (fork,) = forks
    assert fork.forked_from == source.id and fork.parent_id == parent.id
    assert fork.turn_count == 2  # the copied turn and the question


async def test_a_session_of_another_workspace_is_consulted_in_a_fork_of_the_askers(
    vis_home: Path, tmp_path: Path
):
    """With sessions_scope = "all" another project's session answers too: its fork is the
    asker's child, in the asker's workspace (a session opens only where it belongs)."""
    there, here = tmp_path / "there", tmp_path / "here"
    there.mkdir()
    here.mkdir()
    (vis_home / "config.toml").write_text('sessions_scope = "all"\n', encoding="utf-8")
    path = script(
        tmp_path / "s.yaml",
        [{"code": ASK}, {"text": "the other session knew"}],
        {
            "investigate the flaky test": [{"text": "test_x depends on the clock"}],
            "what did you find about the flaky test": [{"text": "the clock"}],
        },
    )
    host = await open_host(there, path)
    try:
        source = await host.new_session()
        await source.submit("investigate the flaky test")
    finally:
        await host.close()
    host = await open_host(here, path)
    events: list[Event] = []
    try:
        parent = await host.new_session()
        parent.subscribe(events.append)
        ended = await parent.submit("ask the other session")
        (fork,) = host.store.children(parent.id)
    finally:
        await host.close()
    assert ended.status.value == "completed", ended.error
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    assert block.stdout.strip() == "investigate the flaky test | the clock | True"
    assert fork.forked_from == source.id and Path(fork.workspace) == here.resolve()
