"""Esc cancels the parent's turn and every child session it is waiting on."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from processes import alive

from vis_core.events import ActivityEnded, Event
from vis_core.subagents.mirror import MIRROR_TASK

from .support import open_host, script

# Each child lists the folder (an Activity the parent sees), then waits forever.
STUCK = textwrap.dedent(
    """\
    import asyncio
    print(await ls("."))
    await asyncio.Event().wait()
    """
)
PARENT = textwrap.dedent(
    """\
    import asyncio
    await asyncio.gather(run_session("stuck one"), run_session("stuck two"))
    """
)


async def test_cancelling_the_parent_cancels_and_closes_every_child(
    workspace: Path, tmp_path: Path
):
    path = script(
        tmp_path / "s.yaml",
        [{"code": PARENT}, {"text": "never"}],
        {"stuck one": [{"code": STUCK}], "stuck two": [{"code": STUCK}]},
    )
    host = await open_host(workspace, path)
    try:
        parent = await host.new_session()
        both_running = asyncio.Event()
        listed: list[str] = []

        def watch(event: Event) -> None:
            if isinstance(event, ActivityEnded) and event.activity and event.activity.tool == "ls":
                listed.append(event.activity.id)
                if len(listed) == 2:
                    both_running.set()

        parent.subscribe(watch)
        turn = asyncio.ensure_future(parent.submit("run two stuck children"))
        await asyncio.wait_for(both_running.wait(), 120)
        children = [s for s in host.registry.sessions if s.id != parent.id]
        assert len(children) == 2
        pids = [pid for child in children for pid in _sandbox_pids(child)]
        assert pids and all(alive(pid) for pid in pids)
        assert len(_mirrors()) == 2  # each child's Activities and cost reach the parent

        parent.cancel()  # what Esc does
        ended = await asyncio.wait_for(turn, 60)

        assert ended.status.value == "cancelled"
        assert [s.id for s in host.registry.sessions] == [parent.id]  # the children were closed
        assert not any(child.running for child in children)
        assert not _mirrors()  # nothing of theirs still runs
        assert not parent.children  # the calls that ran them ended
        assert not any(alive(pid) for pid in pids)  # their sandboxes are gone
        rows = host.store.children(parent.id)
        assert sorted(row.id for row in rows) == sorted(child.id for child in children)
        for row in rows:
            (child_turn,) = host.store.turns(row.id)
            assert child_turn.status == "cancelled"
        calls = [
            a
            for a in host.store.activities(ended.turn_id)
            if a.tool == "run_session" and a.session_id == parent.id
        ]
        assert len(calls) == 2 and all(a.state.value == "cancelled" for a in calls)
    finally:
        await host.close()


def _mirrors() -> list[asyncio.Task]:
    return [t for t in asyncio.all_tasks() if t.get_name() == MIRROR_TASK and not t.done()]


def _sandbox_pids(session) -> list[int]:
    sandbox = session.sandbox
    while hasattr(sandbox, "inner"):
        sandbox = sandbox.inner
    proc = getattr(sandbox, "_proc", None)
    pids = [proc.pid] if proc is not None else []
    inner = getattr(sandbox, "_pid", 0)
    return pids + ([inner] if inner else [])
