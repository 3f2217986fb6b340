"""/compact, /context and /fork, and the model's list_sessions / read_session tools (governed by
the introspection setting)."""

from __future__ import annotations

import json
from pathlib import Path

from vis_core.commands import CommandAction
from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions

from .support import (
    HISTORY,
    REQUESTS,
    joined,
    open_host,
    received,
    run_turns,
    steps,
    write_script,
)


async def test_compact_folds_every_settled_turn_and_context_reports_it(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [*HISTORY, {"text": "Both turns printed numbered words."}, {"text": "answer three"}],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, *REQUESTS)
        before = await host.commands.run(session, "/context")
        compacted = await host.commands.run(session, "/compact keep the numbers")
        again = await host.commands.run(session, "/compact")
        await run_turns(session, "third request")
        after = await host.commands.run(session, "/context")
        gist_call, next_request = received(session)[-2:]
    finally:
        await host.close()
    assert before.ok and "No folds yet" in (before.body or "")
    assert "| system prompt |" in (before.body or "") and "| tools (1) |" in (before.body or "")
    assert compacted.ok and compacted.title == "Compacted turns 1–2"
    assert "Both turns printed numbered words." in (compacted.body or "")
    assert "keep the numbers" in gist_call.messages[0].text
    assert again.title == "Nothing to compact"
    text = joined(next_request)
    assert text.startswith("user: [folded t1,t2] Both turns printed numbered words.")
    assert "first request" not in text and "two-3" not in text
    body = after.body or ""
    assert "| `t1,t2` | compact | t1, t2 | Both turns printed numbered words. | measured:" in body
    assert "Folds keep ~" in body and "of which gists (1)" in body


async def test_fork_copies_up_to_a_turn_and_opens_the_copy(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", HISTORY)
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, *REQUESTS)
        forked = await host.commands.run(session, "/fork 1")
        latest = await host.commands.run(session, "/fork")
        bad = await host.commands.run(session, "/fork 7")
        first = [t.request for t in host.store.turns(forked.data)]
        both = [t.request for t in host.store.turns(latest.data)]
        reopened = await host.open_session(forked.data)
        text = joined(await reopened.next_request())
    finally:
        await host.close()
    assert forked.ok and forked.action is CommandAction.OPEN_SESSION
    assert first == ["first request"] and both == list(REQUESTS)
    assert "one-2" in text and "second request" not in text
    assert not bad.ok and "the session has no turn 7; its turns are 1-2" in (bad.body or "")


async def test_a_fork_after_compact_keeps_the_gist(workspace: Path, tmp_path: Path) -> None:
    """The fork copied events up to the last turn's end: the /compact after it was lost, and
    the fork sent the whole transcript."""
    script = write_script(
        tmp_path / "s.yaml", [*HISTORY, {"text": "Both turns printed numbered words."}]
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, *REQUESTS)
        await host.commands.run(session, "/compact")
        forked = await host.commands.run(session, "/fork")
        fork = await host.open_session(forked.data)
        report = await host.commands.run(fork, "/context")
        text = joined(await fork.next_request())
        folds = [(f.key, f.gist) for f in host.store.folds(forked.data)]
    finally:
        await host.close()
    assert folds == [("t1,t2", "Both turns printed numbered words.")]
    assert "of which gists (1)" in (report.body or "")
    assert text.startswith("user: [folded t1,t2] Both turns printed numbered words.")
    assert "first request" not in text and "two-3" not in text


async def test_a_session_the_model_folded_forks_with_its_fold_under_a_new_id(
    workspace: Path, tmp_path: Path
) -> None:
    """The fold's id was copied as it was: the fork failed on the folds table's unique id."""
    script = write_script(
        tmp_path / "s.yaml",
        [
            *steps("one-1", answer="answer one"),
            {"code": "print(await fold_session('t1', 'g'))"},
            {"text": "answer two"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, *REQUESTS)
        latest = await host.commands.run(session, "/fork")
        first = await host.commands.run(session, "/fork 1")
        source = [(f.id, f.key) for f in host.store.folds(session.id)]
        forked = [(f.id, f.key) for f in host.store.folds(latest.data)]
        before = host.store.folds(first.data)
    finally:
        await host.close()
    assert latest.ok, latest.body
    assert [key for _, key in source] == [key for _, key in forked] == ["t1"]
    assert source[0][0] != forked[0][0]
    assert first.ok and before == []  # the fold came in turn 2


async def test_session_tools_follow_the_introspection_setting(
    workspace: Path, tmp_path: Path
) -> None:
    show = (
        "import json\n"
        "rows = await list_sessions()\n"
        "data = await read_session()\n"
        "found = await list_sessions(search='first')\n"
        "print(json.dumps({'ids': [r['id'] for r in rows], 'found': [r['id'] for r in found],\n"
        "    'turns': [t['user_request'] for t in data['transcript']['turns']],\n"
        "    'folds': data['session']['folds'], 'keys': sorted(data)}))"
    )
    script = write_script(
        tmp_path / "s.yaml",
        [
            *HISTORY,
            {"code": "print(await fold_session('t1', 'g'))"},
            {"code": show},
            {"text": "ok"},
            {"code": "print('list_sessions' in dir(), 'read_session' in dir())"},
            {"text": "ok"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, *REQUESTS, "third request")
        await host.settings.set("introspection", False, "session", session_id=session.id)
        await run_turns(session, "fourth request")  # the first list keeps receiving
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert blocks[-2].error is None, blocks[-2].error
    assert blocks[-2].stdout.startswith("{"), [(b.stdout, b.error) for b in blocks]
    seen = json.loads(blocks[-2].stdout)
    assert seen["ids"] == [session.id] and seen["found"] == [session.id]
    # folded steps are still all there in read_session
    assert seen["turns"] == [*REQUESTS, "third request"]
    assert [f["key"] for f in seen["folds"]] == ["t1"]
    assert seen["folds"][0]["fold_measurement"]["status"] == "measured"
    assert seen["keys"] == sorted(
        [
            "session",
            "current_turn",
            "failures",
            "diagnosis",
            "session_forks",
            "turn_retries",
            "usage",
            "transcript",
        ]
    )
    assert blocks[-1].stdout.strip() == "False False"


async def test_session_tool_rows_count_one_session_and_one_turn_in_the_singular(
    workspace: Path, tmp_path: Path
) -> None:
    """The row said "this session · 1 sessions" (and "· 1 turns")."""
    from vis_core.events import ActivityEnded

    code = "await list_sessions()\nawait read_session()"
    script = write_script(tmp_path / "s.yaml", [{"code": code}, {"text": "ok"}])
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "look")
    finally:
        await host.close()
    shown = {
        e.activity.tool: e.activity.presentation.summary
        for e in events
        if isinstance(e, ActivityEnded) and e.activity and e.activity.presentation
    }
    assert shown["list_sessions"] == "this session · 1 session", shown
    assert shown["read_session"].endswith(" · 1 turn"), shown


async def test_context_without_a_model_says_the_soft_budget_is_none(workspace: Path) -> None:
    """A session with no model has no soft budget: /context said "0" (a session resumed by
    ``vis run --continue`` without its model), read as "fold everything"."""
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        session = await host.new_session()
        assert session.model.provider is None
        report = (await host.commands.run(session, "/context")).body or ""
    finally:
        await host.close()
    assert "soft budget (auto_compress_above): none (no model);" in report
