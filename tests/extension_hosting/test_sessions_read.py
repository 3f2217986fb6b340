"""``vis.list_sessions`` ranking and ``vis.read_session`` by id, prefix and marker."""

from __future__ import annotations

from pathlib import Path

import pytest

import vis_core.extension as vis

from .harness import (
    code_turn,
    install_extension,
    open_host,
    run_turn,
    write_script,
)

FINDER = '''
import json
import vis_core.extension as vis


def find(query: str) -> str:
    """Search sessions."""
    return json.dumps(vis.list_sessions(search=query))


def everything() -> str:
    """Every session."""
    return json.dumps(vis.list_sessions())


def read(key: str | None = None) -> str:
    """Read a session."""
    return json.dumps(vis.read_session(key))


vis.register_extension(vis.Extension(
    name="finder", description="Finds sessions.", alias="finder",
    symbols=[vis.Symbol(find), vis.Symbol(everything), vis.Symbol(read)],
))
'''


async def test_search_ranks_title_then_request_then_reply(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "finder", FINDER)
    write_script(script_path, [{"text": "Nothing to see."}])
    host = await open_host(workspace, script_path)
    try:
        # reply match only
        write_script(script_path, [{"text": "The zephyr build is green."}])
        by_reply = await run_turn(host, "how is the build")
        # request match only
        write_script(script_path, [{"text": "Sure."}])
        by_request = await run_turn(host, "prepare the zephyr notes")
        # title match only
        by_title = await run_turn(host, "hello there")
        ids = {
            "reply": by_reply.ended.session_id,
            "request": by_request.ended.session_id,
            "title": by_title.ended.session_id,
        }
        host.store.set_title(ids["title"], "Zephyr planning")
        host.store.set_title(ids["request"], "Notes")
        host.store.set_title(ids["reply"], "Build")

        write_script(
            script_path,
            code_turn(
                'print(await finder.find("zephyr"))',
                "print(await finder.everything())",
            ),
        )
        probe = await run_turn(host, "find them")
    finally:
        await host.close()

    rows = probe.printed(0)
    assert [row["id"] for row in rows] == [ids["title"], ids["request"], ids["reply"]]
    assert [row["rank"] for row in rows] == [1, 2, 3]
    title, request, reply = rows
    assert (title["is_in_title"], title["is_in_request"]) == (True, False)
    assert (request["is_in_request"], request["is_in_title"]) == (True, False)
    assert (reply["is_in_reply"], reply["is_in_thinking"]) == (True, False)
    assert "**zephyr**" in reply["snippets"]["reply"].lower()
    for row in rows:
        assert {"id", "title", "turn_count", "created_at", "modified_at"} <= set(row)
    assert title["title"] == "Zephyr planning" and title["turn_count"] == 1

    listed = probe.printed(1)
    assert listed[0]["id"] == probe.ended.session_id  # newest first
    assert {row["id"] for row in listed} >= set(ids.values())
    assert "rank" not in listed[0]


async def test_read_session_by_id_prefix_marker_and_bound(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "finder", FINDER)
    write_script(
        script_path,
        [
            {"text": "Looking.", "code": 'print("hello from the block")'},
            {"text": "All done."},
        ],
    )
    host = await open_host(workspace, script_path)
    try:
        source = await run_turn(host, "say hello")
        sid = source.ended.session_id
        write_script(
            script_path,
            code_turn(
                f'print(await finder.read("{sid}"))',
                f'print(await finder.read("{sid[:10]}"))',
                f'print(await finder.read("vis_session_id#{sid}"))',
                "print(await finder.read())",
            ),
        )
        probe = await run_turn(host, "read it")
    finally:
        await host.close()

    by_id, by_prefix, by_marker, bound = (probe.printed(i) for i in range(4))
    assert by_id == by_prefix == by_marker
    assert set(by_id) == {
        "session",
        "current_turn",
        "failures",
        "diagnosis",
        "session_forks",
        "turn_retries",
        "usage",
        "transcript",
    }
    assert by_id["session"]["id"] == sid
    (turn,) = by_id["transcript"]["turns"]
    assert (turn["position"], turn["user_request"], turn["status"]) == (1, "say hello", "completed")
    assert turn["content"] == "All done."
    (iteration,) = turn["iterations"]
    (block,) = iteration["blocks"]
    assert block["code"].strip() == 'print("hello from the block")'
    assert block["stdout"].strip() == "hello from the block"
    assert block["error"] is None
    assert by_id["failures"] == [] and by_id["current_turn"] is None
    # without an argument: the session that runs the extension, with its running turn
    assert bound["session"]["id"] == probe.ended.session_id
    assert bound["current_turn"]["user_request"] == "read it"


def test_reads_raise_outside_vis() -> None:
    with pytest.raises(RuntimeError, match="inside a Vis process"):
        vis.list_sessions()
    with pytest.raises(RuntimeError, match="inside a Vis process"):
        vis.read_session("abc")
