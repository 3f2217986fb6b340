"""``run_session``: child sessions that answer for a session, several at once."""

from __future__ import annotations

import textwrap
from pathlib import Path

from vis_core.events import ActivityEnded, BlockFinished, Event, UsageReported
from vis_core.model.activity import ActivityState
from vis_core.store.session_data import session_data

from .support import PRICES, open_host, script, write_config

# Each child waits until the three children exist: run one after another, the first would
# wait alone (and say so), so "together" proves they ran at once.
WAIT_FOR_SIBLINGS = textwrap.dedent(
    """\
    import asyncio
    for _ in range(400):
        titles = [s["title"] for s in await list_sessions()]
        if {"count alpha", "count beta", "count gamma"} <= set(titles):
            print("together")
            break
        await asyncio.sleep(0.02)
    else:
        print("alone")
    """
)


def _child(name: str) -> list[dict]:
    return [
        {"code": WAIT_FOR_SIBLINGS, "usage": {"input": 1000, "output": 100}},
        {"text": f"{name} found 3 files", "usage": {"input": 2000, "output": 50}},
    ]


PARENT_CODE = textwrap.dedent(
    """\
    import asyncio
    answers = await asyncio.gather(
        run_session("count alpha"), run_session("count beta"), run_session("count gamma")
    )
    print(answers)
    """
)


async def test_three_children_run_at_once_and_answer(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    write_config(vis_home, PRICES)
    path = script(
        tmp_path / "s.yaml",
        [{"code": PARENT_CODE, "usage": {"input": 500, "output": 40}}, {"text": "all counted"}],
        {
            "count alpha": _child("alpha"),
            "count beta": _child("beta"),
            "count gamma": _child("gamma"),
        },
    )
    host = await open_host(workspace, path)
    events: list[Event] = []
    try:
        parent = await host.new_session()
        parent.subscribe(events.append)
        ended = await parent.submit("count the files three ways")
        children = host.store.children(parent.id)
        read = session_data(host.store, children[0])["session"]  # read_session() says so too
        child_costs = sum(row.cost for row in children)
        stored_parent = host.store.get_session(parent.id)
        open_ids = {s.id for s in host.registry.sessions}
    finally:
        await host.close()

    assert ended.status.value == "completed", ended.error
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    assert "['alpha found 3 files', 'beta found 3 files', 'gamma found 3 files']" in block.stdout
    # the relation is stored; the children ran at once; they are closed
    assert sorted(row.title for row in children) == ["count alpha", "count beta", "count gamma"]
    assert all(row.parent_id == parent.id and row.turn_count == 1 for row in children)
    assert open_ids == {parent.id}
    assert read["parent_id"] == parent.id
    # each child's Activities are under the call that started it, in the parent's turn
    ends = {
        e.activity.id: e.activity for e in events if isinstance(e, ActivityEnded) and e.activity
    }
    calls = [a for a in ends.values() if a.tool == "run_session"]
    assert len(calls) == 3 and all(a.state is ActivityState.SUCCEEDED for a in calls)
    listed = [a for a in ends.values() if a.tool == "list_sessions"]
    assert listed and {a.parent_id for a in listed} == {a.id for a in calls}
    assert all(a.session_id == parent.id and a.turn_id == ended.turn_id for a in listed)
    # with its own answer: "together" in each child's block
    for row in children:
        assert "together" in _child_stdout(path, host, row.id)
    # their cost is the parent's too: in its turn, its session total and its live figure
    mirrored = [e for e in events if isinstance(e, UsageReported) and e.purpose == "subagent"]
    assert len(mirrored) == 6 and child_costs > 0
    assert abs(sum(e.cost for e in mirrored) - child_costs) < 1e-9
    assert stored_parent is not None
    assert abs(stored_parent.cost - (ended.cost)) < 1e-9
    assert ended.cost > child_costs  # the parent's own requests plus its children's
    assert abs(parent.cost - ended.cost) < 1e-9


def _child_stdout(path: Path, host, session_id: str) -> str:
    from vis_core.store import Store

    with Store(host.paths.db_file) as store:
        return "".join(
            e.event.stdout for e in store.events(session_id) if isinstance(e.event, BlockFinished)
        )
