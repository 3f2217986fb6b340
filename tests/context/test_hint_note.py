"""From 90 % of the soft budget the next request carries the hint itself, after the latest
tool result (the cached prefix stays), with the exact fold key; once per level and key."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import ContextNote

from .support import flat, joined, open_host, received, run_turns, write_script


async def test_the_hint_reaches_the_model_after_the_last_tool_result(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"code": "print('one')", "usage": {"input": 100_000, "output": 10}},
            {"text": "answer one"},
            {"code": "print('two')", "usage": {"input": 185_000, "output": 10}},  # 92 %
            {"code": "print('three')", "usage": {"input": 186_000, "output": 10}},
            {"code": "await fold_session('t1', 'gist of one')", "usage": {"input": 187_000}},
            {"text": "answer two", "usage": {"input": 120_000, "output": 10}},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "first request", "second request")
        requests = received(session)
    finally:
        await host.close()
    before, after = flat(requests[2]), flat(requests[3])
    assert after[: len(before)] == before  # the cached prefix stays
    note = after[-1]
    assert note.startswith("tool: two\n\n[Vis: Context is at 92% of the soft budget")
    assert 'fold_session("-t1", gist) folds every earlier turn not folded yet.' in note
    assert note.endswith('session["utilization"] has the numbers.]')
    assert all("[Vis: Context" not in m for m in flat(requests[2]))  # below 90 %: no note
    assert "[Vis: Context" not in flat(requests[4])[-1]  # same level and key: not again
    assert "[Vis: Context" not in flat(requests[5])[-1]  # folded since the measurement
    notes = [e for e in events if isinstance(e, ContextNote)]
    assert [n.topic for n in notes] == ["utilization"]
    assert notes[0].summary().startswith("Vis told the model: Context is at 92% of the soft")
    # the tool description and the system prompt (fold_session's line) name it too
    assert 'session["utilization"]' in requests[0].tools[0].description
    assert '`fold_session`: Replace settled steps with your summary (a fold); `session["utili' in (
        requests[0].system
    )


async def test_a_fold_retires_the_hint_and_a_new_one_follows_while_the_budget_calls_for_it(
    workspace: Path, tmp_path: Path
) -> None:
    """The hint that asked for a fold stayed in every later request, inviting a second fold
    after the first had brought the context down. The stored note stays."""
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"code": "print('one')", "usage": {"input": 100_000, "output": 10}},
            {"text": "answer one", "usage": {"input": 185_000, "output": 10}},  # 92 %
            {"code": "await fold_session('-t1', 'gist of one')", "usage": {"input": 186_000}},
            {"code": "print('still')", "usage": {"input": 184_000, "output": 10}},  # 92 % still
            {"text": "answer two", "usage": {"input": 100_000, "output": 10}},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "first request", "second request")
        requests = received(session)
        reopened = await host.open_session(session.id)  # rebuilt from the stored events
        rebuilt = joined(await reopened.next_request())
    finally:
        await host.close()
    asked = flat(requests[2])[-1]
    assert asked.startswith("user: second request\n\n[Vis: Context is at 92% of the soft budget")
    assert 'fold_session("-t1", gist)' in asked
    assert "[Vis: Context" not in joined(requests[3])  # the fold retired it
    assert joined(requests[4]).count("[Vis: Context") == 1  # measured again: a new one
    assert flat(requests[4])[-1].startswith("tool: still\n\n[Vis: Context is at 92%")
    assert 'fold_session("t2/i1-", gist)' in flat(requests[4])[-1]
    assert "second request\n\n[Vis" not in rebuilt and rebuilt.count("[Vis: Context") == 1
    notes = [e for e in events if isinstance(e, ContextNote)]
    assert len(notes) == 2 and 'fold_session("-t1", gist)' in notes[0].text  # both stored
