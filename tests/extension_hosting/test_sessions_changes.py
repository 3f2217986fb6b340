"""``Session.fork``, ``set_model``, ``publish`` and ``vis.sessions.models()`` through an
extension: each change shows its own Activity, and the ownership and thread rules hold."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.events import (
    ActivityEnded,
    CommandNoted,
    FoldCreated,
    Notification,
    TurnEnded,
    TurnStarted,
)
from vis_core.extension.context import CallContext, calling
from vis_core.extension_host.session_changes import fork_stored
from vis_core.model.turn import TurnStatus
from vis_core.store import Store

from .harness import code_turn, install_extension, open_host, run_turn, write_script

CHANGER = '''
import json
import threading

import vis_core.extension as vis


def change(other: str) -> str:
    """Fork the bound session, switch the fork's model, publish into both, list models."""
    bound = vis.session
    fork = bound.fork(1)
    fork.set_model("scripted/other")
    fork.publish("Forked for an experiment.", kind="success")
    bound.publish("A fork was made.")
    out = {"bound": bound.id, "fork": fork.id, "origin": fork.origin,
           "fork_turns": [t["user_request"] for t in fork.turns()],
           "forked_from": fork.read()["session"]["forked_from"],
           "models": [m["id"] for m in vis.sessions.models()],
           "current": [m["id"] for m in vis.sessions.models() if m["current"]]}
    try:
        vis.sessions.get(other).fork()
    except vis.GatewayError as exc:
        out["other"] = [exc.status, exc.code]
    try:
        bound.publish("x", kind="shout")
    except ValueError as exc:
        out["bad_kind"] = str(exc)

    def worker() -> None:
        try:
            fork.set_model("scripted/third")
        except vis.GatewayError as exc:
            out["thread"] = [exc.status, exc.code]
        out["thread_models"] = len(vis.sessions.models())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
    return json.dumps(out)


vis.register_extension(vis.Extension(
    name="changer", description="Changes sessions.", alias="changer",
    symbols=[vis.Symbol(change)],
))
'''


async def test_fork_set_model_publish_and_models(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "changer", CHANGER)
    write_script(script_path, [{"text": "A person's reply."}])
    host = await open_host(workspace, script_path)
    try:
        person = await run_turn(host, "someone else's session")
        other = person.ended.session_id
        first = await run_turn(host, "first request")  # the bound session's turn 1
        bound_id = first.ended.session_id
        bound = host.registry.live_session(bound_id)
        assert bound is not None
        await host.close_session(bound)  # opened again below, with the model of the new script
        write_script(script_path, code_turn(f"print(await changer.change({other!r}))"))
        outcome = await run_turn(host, "fork it", session_id=bound_id)
        out = outcome.printed(0)
        fork_row = host.store.get_session(out["fork"])
        fork_events = [s.event for s in host.store.events(out["fork"])]
        model_setting = host.settings.value("model", out["fork"])
    finally:
        await host.close()

    assert out["fork"] != out["bound"] and out["origin"] == "changer"
    assert out["fork_turns"] == ["first request"]  # copied up to and including turn 1
    assert fork_row is not None and fork_row.forked_from == out["bound"]
    forked_from = out["forked_from"]
    assert forked_from["session_id"] == out["bound"] and forked_from["outcome"] == "completed"
    assert forked_from["turn_id"] == first.ended.turn_id
    assert model_setting == "scripted/other"
    notes = [e for e in fork_events if isinstance(e, Notification)]
    assert [(n.text, n.kind.value) for n in notes] == [("Forked for an experiment.", "success")]
    assert any(isinstance(e, Notification) and e.text == "A fork was made." for e in outcome.events)
    assert "anthropic/claude-opus-4-6" in out["models"] and "openai/gpt-5" in out["models"]
    assert out["current"] == ["scripted/script"]
    assert out["other"] == [403, "forbidden-session"]
    assert "kind must be one of info, success, warn, error" in out["bad_kind"]
    assert out["thread"] == [403, "forbidden-route"]
    assert out["thread_models"] == len(out["models"]) - 1  # no bound session: no current
    ended = [e.activity for e in outcome.events if isinstance(e, ActivityEnded) and e.activity]
    (change,) = [a for a in ended if a.tool in ("change", "changer.change")]
    changes = [(a.tool, a.presentation.headline) for a in ended if a.parent_id == change.id]
    assert changes == [  # refused calls change nothing and show no Activity
        ("Session.fork", "Forked session"),
        ("Session.set_model", "Changed model"),
        ("Session.publish", "Published to session"),
        ("Session.publish", "Published to session"),
    ]
    assert all(a.state.value == "succeeded" for a in ended if a.parent_id == change.id)


async def test_changes_need_a_bound_session(workspace: Path, script_path: Path) -> None:
    write_script(script_path, [{"text": "ok"}])
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host, "hello")
        unbound = CallContext(
            session_id=None,
            workspace_root=workspace,
            project_root=workspace,
            owner="x",
            runtime=host.runtime,
        )
        with calling(unbound):  # the host serves what its calls carry: its runtime
            handle = vis.sessions.get(outcome.ended.session_id)
        for change in (
            lambda: handle.fork(),
            lambda: handle.set_model("scripted/x"),
            lambda: handle.publish("hi"),
        ):
            with calling(unbound), pytest.raises(vis.GatewayError) as refused:
                await change()  # the host's handle: served on its loop
            assert (refused.value.status, refused.value.code) == (403, "session-not-bound")
    finally:
        await host.close()


async def test_a_fork_is_the_session_as_it_stands_without_the_turn_still_running(
    tmp_path: Path,
) -> None:
    """What came after the last settled turn (a /compact's note and fold) is the fork's; the
    turn still running, and what came after its start, is not."""
    with Store(tmp_path / "vis.db") as store:
        sid = store.create_session("/w", "/w").id
        store.append_many(
            [
                TurnStarted(sid, turn_id="t1", position=1, request="first"),
                TurnEnded(sid, turn_id="t1", status=TurnStatus.COMPLETED),
                CommandNoted(sid, command="/compact", markdown="Compacted t1"),
                FoldCreated(sid, fold_id="f1", turn_id="t1", key="t1", gist="g", origin="compact"),
                TurnStarted(sid, turn_id="t2", position=2, request="second"),
                Notification(sid, text="while the second turn runs"),
            ]
        )
        fork = await asyncio.wrap_future(fork_stored(store, sid, None, "test"))
        copied = [s.event.type for s in store.events(fork.id)]
        folds = [(f.key, f.gist) for f in store.folds(fork.id)]
    assert copied == ["SessionCreated", "TurnStarted", "TurnEnded", "CommandNoted", "FoldCreated"]
    assert folds == [("t1", "g")] and fork.turn_count == 1
