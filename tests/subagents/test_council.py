"""``vis.council``: an extension's tool runs child sessions of the session that called it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from vis_core.events import ActivityEnded, BlockFinished, Event

from .support import open_host, script

ASKER = '''
import vis_core.extension as vis


def second_opinion(question: str) -> str:
    """Ask a child session, then consult the session titled 'earlier work'."""
    answer = vis.council.run_session(question)
    rows = [s for s in vis.list_sessions() if s["title"] == "earlier work"]
    found = vis.council.consult(rows[0]["id"], "what did you learn?")
    return f"{answer} | {found['title']}: {found['answer']}"


vis.register_extension(vis.Extension(
    name="asker", description="Asks other sessions.", alias="asker",
    symbols=[vis.Symbol(second_opinion)],
))
'''


async def test_an_extension_runs_children_and_consults_through_vis_council(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    folder = vis_home / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "asker.py").write_text(textwrap.dedent(ASKER), encoding="utf-8")
    path = script(
        tmp_path / "s.yaml",
        [{"code": 'print(await asker.second_opinion("is the plan sound?"))'}, {"text": "ok"}],
        {
            "earlier work": [{"text": "noted"}],
            "is the plan sound?": [{"code": 'print(await ls("."))'}, {"text": "it is sound"}],
            "what did you learn?": [{"text": "the cache was stale"}],
        },
    )
    host = await open_host(workspace, path)
    events: list[Event] = []
    try:
        earlier = await host.new_session()
        await earlier.submit("earlier work")
        await host.close_session(earlier)
        parent = await host.new_session()
        parent.subscribe(events.append)
        ended = await parent.submit("get a second opinion")
        children = host.store.children(parent.id)
    finally:
        await host.close()

    assert ended.status.value == "completed", ended.error
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    assert block.stdout.strip() == "it is sound | earlier work: the cache was stale"
    assert len(children) == 2  # the child and the consulted fork, both under the session
    ends = {
        e.activity.id: e.activity for e in events if isinstance(e, ActivityEnded) and e.activity
    }
    (tool,) = [a for a in ends.values() if a.tool == "second_opinion"]
    (listed,) = [a for a in ends.values() if a.tool == "ls"]
    assert listed.parent_id == tool.id  # the child's calls show under the extension's tool
