"""Scripted thinking is stored and found by ``vis.list_sessions(search=)`` after replies."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vis_core.events import AssistantThinking

from .harness import code_turn, install_extension, open_host, run_turn, write_script
from .test_sessions_read import FINDER


async def test_thinking_matches_rank_after_replies_with_the_flag(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "finder", FINDER)
    write_script(script_path, [{"text": "Nothing."}])
    host = await open_host(workspace, script_path)
    try:
        write_script(
            script_path,
            [
                {"thinking": "Maybe the quokka cache is stale.", "code": "print(1)"},
                {"text": "Cleared it.", "thinking": "Now answer briefly."},
            ],
        )
        by_thinking = await run_turn(host, "why is it slow")
        write_script(script_path, [{"text": "The quokka service is up."}])
        by_reply = await run_turn(host, "status please")
        write_script(script_path, code_turn('print(await finder.find("quokka"))'))
        probe = await run_turn(host, "find it")
        db_file = host.paths.db_file
    finally:
        await host.close()

    thoughts = [e for e in by_thinking.events if isinstance(e, AssistantThinking)]
    assert [(t.iteration, t.text) for t in thoughts] == [
        (0, "Maybe the quokka cache is stale."),
        (1, "Now answer briefly."),
    ]
    rows = probe.printed(0)
    assert [row["id"] for row in rows] == [by_reply.ended.session_id, by_thinking.ended.session_id]
    reply, thinking = rows
    assert (reply["rank"], reply["is_in_reply"], reply["is_in_thinking"]) == (1, True, False)
    assert (thinking["rank"], thinking["is_in_thinking"], thinking["is_in_reply"]) == (
        2,
        True,
        False,
    )
    assert "**quokka**" in thinking["snippets"]["thinking"].lower()

    db = sqlite3.connect(db_file)
    try:
        stored = db.execute("SELECT text FROM thinking ORDER BY seq").fetchall()
    finally:
        db.close()
    assert stored == [("Maybe the quokka cache is stale.",), ("Now answer briefly.",)]
