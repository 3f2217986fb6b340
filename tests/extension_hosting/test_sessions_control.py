"""``vis.sessions``, ``vis.run`` and ``vis.session``: creating and driving sessions, 403 codes."""

from __future__ import annotations

from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.events import ActivityEnded
from vis_core.extension.context import CallContext, calling

from .harness import code_turn, install_extension, open_host, run_turn, write_script

SPAWNER = '''
import json
import threading

import vis_core.extension as vis


def spawn(script: str) -> str:
    """Create a session, run a turn in it, and try the calls a thread may not make."""
    created = vis.sessions.create(provider="scripted", script=script, title="Second opinion")
    turn = created.run("What do you think?", timeout=30)
    one_shot = vis.run("Quick question", provider="scripted", script=script, timeout=30)
    out = {"bound": vis.session.id, "created": created.id, "origin": created.origin,
           "turn": turn, "one_shot": one_shot, "title": created.title}

    def worker() -> None:
        try:
            vis.sessions.create()
        except vis.GatewayError as exc:
            out["thread_create"] = [exc.status, exc.code, str(exc)]
        out["thread_read"] = len(vis.sessions.list())
        again = created.send("And again?").wait(30)  # the extension's own session
        out["thread_send"] = again["status"]

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(60)
    snapshot = vis.sessions.export(created.id)
    restored = vis.sessions.restore(snapshot, key="copy-1")
    out["restored"] = restored.id
    out["restored_again"] = vis.sessions.restore(snapshot, key="copy-1").id
    out["restored_turns"] = [t["user_request"] for t in restored.turns()]
    out["export_bound"] = vis.sessions.export()["session"]["id"]
    return json.dumps(out)


def poke(session_id: str) -> str:
    """Send into a session that belongs to someone else."""
    try:
        vis.sessions.get(session_id).send("hi")
    except vis.GatewayError as exc:
        return json.dumps([exc.status, exc.code])
    return "sent"


vis.register_extension(vis.Extension(
    name="spawner", description="Starts sessions.", alias="spawner",
    symbols=[vis.Symbol(spawn), vis.Symbol(poke)],
))
'''


async def test_an_extension_creates_runs_and_restores_sessions(
    vis_home: Path, workspace: Path, script_path: Path, tmp_path: Path
) -> None:
    install_extension(vis_home, "spawner", SPAWNER)
    other = tmp_path / "other.yaml"
    write_script(other, [{"text": "Looks fine to me."}, {"text": "Still fine."}])
    write_script(script_path, [{"text": "A person's reply."}])
    host = await open_host(workspace, script_path)
    try:
        person = await run_turn(host, "hello")  # a person's session
        write_script(
            script_path,
            code_turn(
                f"print(await spawner.spawn({str(other)!r}))",
                f"print(await spawner.poke({person.ended.session_id!r}))",
            ),
        )
        outcome = await run_turn(host, "get a second opinion")
        store = host.store
        created_id = outcome.printed(0)["created"]
        created_turns = [t.request for t in store.turns(created_id)]
    finally:
        await host.close()

    out = outcome.printed(0)
    assert out["bound"] == outcome.ended.session_id
    assert out["origin"] == "spawner" and out["title"] == "Second opinion"
    assert out["turn"]["status"] == "completed"
    assert out["turn"]["content"] == "Looks fine to me."
    assert out["one_shot"]["status"] == "completed"
    assert out["one_shot"]["session_id"] not in (out["created"], out["bound"])
    status, code, text = out["thread_create"]
    assert (status, code) == (403, "forbidden-route") and "use a callback" in text
    assert out["thread_read"] >= 3
    assert out["thread_send"] == "completed"
    assert created_turns == ["What do you think?", "And again?"]
    assert out["restored"] not in (out["created"], out["bound"])
    assert out["restored_again"] == out["restored"]  # the key makes restore idempotent
    assert out["restored_turns"] == ["What do you think?", "And again?"]
    assert out["export_bound"] == out["bound"]
    assert outcome.printed(1) == [403, "forbidden-session"]
    # each change shows its own Activity under spawner.spawn's; reads and the worker show none
    ended = [e.activity for e in outcome.events if isinstance(e, ActivityEnded) and e.activity]
    (spawn,) = [a for a in ended if a.tool == "spawn"]
    changes = [(a.tool, a.presentation.headline) for a in ended if a.parent_id == spawn.id]
    assert changes == [
        ("vis.sessions.create", "Created session"),
        ("Session.send", "Sent request"),
        ("vis.sessions.create", "Created session"),  # vis.run: a session, then its request
        ("Session.send", "Sent request"),
        ("vis.sessions.restore", "Restored session"),
    ]  # the second restore with the same key changed nothing
    summaries = [a.presentation.summary for a in ended if a.parent_id == spawn.id]
    assert summaries[0] == f"Second opinion · {out['created'][:8]}"
    assert summaries[1] == f"{out['created'][:8]} · What do you think?"
    assert all(a.tag.value == "mutation" for a in ended if a.parent_id == spawn.id)


async def test_changes_need_a_bound_session(workspace: Path, script_path: Path) -> None:
    write_script(script_path, [{"text": "ok"}])
    host = await open_host(workspace, script_path)
    try:
        unbound = CallContext(
            session_id=None,
            workspace_root=workspace,
            project_root=workspace,
            owner="x",
            runtime=host.runtime,
        )
        with calling(unbound), pytest.raises(vis.GatewayError) as refused:
            await vis.sessions.create()  # the host's handle: served on its loop
        assert (refused.value.status, refused.value.code) == (403, "session-not-bound")
        with calling(unbound), pytest.raises(RuntimeError, match="no session did"):
            vis.session.id  # noqa: B018 - the attribute read is the call under test
    finally:
        await host.close()


def test_outside_vis_sessions_calls_raise() -> None:
    with pytest.raises(RuntimeError, match="inside a Vis process"):
        vis.sessions.list()
    with pytest.raises(RuntimeError, match="no session did"):
        vis.session.id  # noqa: B018
