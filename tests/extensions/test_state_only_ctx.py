"""A state-only ``ctx`` (``ctx_state_key``): answered without a worker while its key is empty.

The bundled todo extension declares one: a session that keeps no todos starts no extension
worker for its ``session`` dict, one that adds a todo sees it listed from the next block on,
and the registration worker takes each declared ``ctx``'s answer against empty state only
where that answer is plain data it gave without writing.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import yaml

from vis_core.events import BlockFinished, Event
from vis_core.extension_host.declared import StateOnlyCtx, WorkerCallback
from vis_core.extension_host.loader import load_extensions
from vis_core.host import Host, HostOptions

SHOW_TODO = "import json\nprint(json.dumps(session['todo']))"


def _script(path: Path, blocks: list[str]) -> Path:
    turns = [{"code": textwrap.dedent(b)} for b in blocks] + [{"text": "done"}]
    path.write_text(yaml.safe_dump(turns), encoding="utf-8")
    return path


async def _printed(host: Host, script: Path, blocks: list[str]) -> tuple[str, list[Any]]:
    """A new session's one turn of ``blocks``: its id and what each block printed last."""
    _script(script, blocks)
    session = await host.new_session()
    events: list[Event] = []
    session.subscribe(events.append)
    await session.submit("go")
    finished = [e for e in events if isinstance(e, BlockFinished)]
    assert [b.error for b in finished] == [None] * len(blocks)
    return session.id, [json.loads(b.stdout.strip().splitlines()[-1]) for b in finished]


def _worker_pid(host: Host, session_id: str, owner: str) -> int | None:
    return host.registry.extension_workers[session_id].worker_for(owner).pid


async def test_only_a_session_that_keeps_todos_starts_a_worker_for_the_todo_ctx(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        quiet, (shown,) = await _printed(host, script, [SHOW_TODO])
        assert shown == {"open": 0, "items": []}
        assert _worker_pid(host, quiet, "todo") is None  # the answer came without one

        busy, (added, listed) = await _printed(
            host, script, ["print((await todo.add('ship it')).id)", SHOW_TODO]
        )
        assert (added, listed) == (1, {"open": 1, "items": ["#1 ship it"]})
        assert _worker_pid(host, busy, "todo") is not None

        later, (shown,) = await _printed(host, script, [SHOW_TODO])  # another session's list
        assert shown == {"open": 0, "items": []}
        assert _worker_pid(host, later, "todo") is None
    finally:
        await host.close()


NOTES = '''
import vis_core.extension as vis

KEY = "notes:{session_id}"


def note(text: str) -> int:
    """Keep a note for this session."""
    key = KEY.format(session_id=vis.session.id)
    vis.state[key] = [*vis.state.get(key, []), text]
    return len(vis.state[key])


def _ctx(env):
    return {"notes": vis.state.get(KEY.format(session_id=env["session_id"]), [])}


vis.register_extension(vis.Extension(
    name="notes", description="Notes.", alias="notes", symbols=[vis.Symbol(note)],
    ctx=_ctx, ctx_state_key=KEY,
))
'''

# ctx functions that give no answer to keep: the host runs them in the worker at every block
NO_ANSWER = {
    "writes": 'vis.state["seen"] = True\n    return {"writes": 1}',
    "raises": 'raise LookupError("no list yet")',
    "unplain": 'return {"unplain": object()}',
    "notdict": "return [1]",
}


def _no_answer(name: str, body: str) -> str:
    return (
        "import vis_core.extension as vis\n\n"
        f"def _ctx(env):\n    {body}\n\n"
        f"vis.register_extension(vis.Extension(name={name!r}, description='D.', ctx=_ctx, "
        f"ctx_state_key='k'))\n"
    )


def _install(name: str, source: str) -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source, encoding="utf-8")


def test_registration_keeps_only_a_plain_answer_given_without_writing() -> None:
    _install("notes", NOTES)
    for name, body in NO_ANSWER.items():
        _install(name, _no_answer(name, body))
    loaded = load_extensions(bundled=None, include_packages=False)
    assert sorted(e.name for e in loaded.enabled) == sorted(["notes", *NO_ANSWER])
    notes = loaded.get("notes")
    assert notes is not None and notes.declaration is not None
    ctx = notes.declaration.ctx
    assert isinstance(ctx, StateOnlyCtx) and ctx.when_empty == {"notes": []}
    assert notes.declaration.ctx_state_key == "notes:{session_id}"
    for name in NO_ANSWER:
        ext = loaded.get(name)
        assert ext is not None and ext.declaration is not None
        assert type(ext.declaration.ctx) is WorkerCallback, name  # asked in the worker


async def test_a_state_only_ctx_runs_in_the_worker_once_its_key_holds_a_value(
    tmp_path: Path,
) -> None:
    _install("notes", NOTES)
    _install("writes", _no_answer("writes", NO_ANSWER["writes"]))
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    show = "import json\nprint(json.dumps([session['notes'], session.get('writes')]))"
    try:
        session_id, (before, count, after) = await _printed(
            host, script, [show, "print(await notes.note('first'))", show]
        )
        # the ctx that writes gives no answer at registration: it ran in the worker, where a
        # write is allowed, from the first block on
        assert before == [[], 1]
        assert count == 1 and after == [["first"], 1]
        assert _worker_pid(host, session_id, "notes") is not None
    finally:
        await host.close()
