"""fold_session in python_execution: each key form changes what the provider receives next,
and never what is stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from vis_core.events import BlockFinished, FoldCreated, TurnStatus
from vis_core.store.session_data import session_data

from .support import HISTORY, REQUESTS, flat, joined, open_host, received, run_turns, write_script

EVERYTHING = (
    "first request",
    "one-1",
    "one-2",
    "answer one",
    "second request",
    "two-1",
    "two-2",
    "two-3",
    "answer two",
)


def fold_turn(key: str, gist: str | None = "GIST") -> list[dict]:
    call = f"fold_session({key!r}, {gist!r})" if gist is not None else f"fold_session({key!r})"
    return [{"code": f"print(await {call})"}, {"text": "answer three"}]


@pytest.mark.parametrize(
    ("key", "gone", "gist_at"),
    [
        # a whole turn: its request and answer go too; the gist stands where it stood
        ("t1", ("first request", "one-1", "one-2", "answer one"), 0),
        ("t2/i1-i2", ("two-1", "two-2"), 7),
        ("t2/i2-", ("two-2", "two-3"), 9),
        ("-t2", EVERYTHING, 0),
        ("-t2/i1", ("first request", "one-1", "one-2", "answer one", "two-1"), 0),
        ("t1,t2/i3", ("first request", "one-1", "one-2", "answer one", "two-3"), 0),
        # a range covering a whole earlier turn removes it as the turn key does
        ("t1/i1-i2", ("first request", "one-1", "one-2", "answer one"), 0),
        ("t2/i1-", ("second request", "two-1", "two-2", "two-3", "answer two"), 6),
        ("-t1/i2", ("first request", "one-1", "one-2", "answer one"), 0),
    ],
)
async def test_each_key_form_changes_what_the_provider_receives(
    workspace: Path, tmp_path: Path, key: str, gone: tuple[str, ...], gist_at: int
) -> None:
    script = write_script(tmp_path / "s.yaml", [*HISTORY, *fold_turn(key)])
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, *REQUESTS, "third request")
        before = joined(received(session)[-2])  # the request that ran the fold
        after = received(session)[-1]  # the next one
        stored = session_data(host.store, host.store.get_session(session.id))
    finally:
        await host.close()

    fold = next(e for e in events if isinstance(e, FoldCreated))
    assert fold.key == key and fold.gist == "GIST" and fold.removed_tokens > 0
    block = [e for e in events if isinstance(e, BlockFinished)][-1]
    assert block.stdout.startswith(f"Folded {key}:"), block.stdout
    text = joined(after)
    for word in EVERYTHING:
        assert word in before
        assert (word not in text) is (word in gone), word
    messages = flat(after)
    assert messages[gist_at] == f"user: [folded {key}] GIST"
    assert text.count("[folded") == 1
    assert "third request" in text
    # the stored history is unchanged: every request, block and answer is still there
    turns = stored["transcript"]["turns"]
    assert [t["user_request"] for t in turns] == [*REQUESTS, "third request"]
    assert [t["status"] for t in turns] == ["completed"] * 3
    outputs = [b["stdout"].strip() for t in turns[:2] for i in t["iterations"] for b in i["blocks"]]
    assert outputs == ["one-1", "one-2", "two-1", "two-2", "two-3"]
    assert [t["content"] for t in turns] == ["answer one", "answer two", "answer three"]


async def test_without_a_gist_the_steps_simply_leave(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", [*HISTORY, *fold_turn("t1", None)])
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, *REQUESTS, "third request")
        text = joined(received(session)[-1])
    finally:
        await host.close()
    assert "first request" not in text and "one-1" not in text
    assert "[folded" not in text
    assert text.startswith("user: second request")


async def test_a_covering_fold_replaces_the_earlier_gist_and_survives_a_reopen(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            *HISTORY,
            {"code": "print(await fold_session('t2/i1-i2', 'SMALL'))"},
            {"code": "print(await fold_session('-t2', 'BIG'))"},
            {"text": "answer three"},
            {"text": "answer four"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, *REQUESTS, "third request")
        text = joined(received(session)[-1])
        reopened = await host.open_session(session.id)  # rebuilt from the stored events
        rebuilt = joined(await reopened.next_request())
        folds = host.store.folds(session.id)
    finally:
        await host.close()
    assert "[folded -t2] BIG" in text and "[folded t2/i1-i2]" not in text
    assert "two-3" not in text
    assert "[folded -t2] BIG" in rebuilt and "[folded t2/i1-i2]" not in rebuilt
    assert "first request" not in rebuilt
    assert [f.key for f in folds] == ["t2/i1-i2", "-t2"]
    assert folds[1].spans == ((1, 0, 0), (2, 0, 0))


async def test_refusals_reach_the_model_and_fold_nothing(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            *HISTORY,
            {"code": "await fold_session('t3/i1', 'live')"},
            {"code": "await fold_session('-t1/i16', 'too far')"},
            {"text": "answer three"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, *REQUESTS, "third request")
        text = joined(received(session)[-1])
        db = sqlite3.connect(host.paths.db_file)
        count = db.execute("select count(*) from folds").fetchone()[0]
        db.close()
    finally:
        await host.close()
    errors = [e.error or "" for e in events if isinstance(e, BlockFinished)][-2:]
    assert "you cannot fold the live step (t3/i1)" in errors[0]
    assert "turn t1 has no iteration i16 (it has i1-i2)" in errors[1]
    assert "- t2 (the whole turn) or a range of t2/i1-i3 (3 iterations)" in errors[1]
    assert "first request" in text and count == 0
    assert not any(isinstance(e, FoldCreated) for e in events)
    assert all(e.status is TurnStatus.COMPLETED for e in events if hasattr(e, "status"))


async def test_the_receipt_is_pending_then_measured_in_session_and_read_session(
    workspace: Path, tmp_path: Path
) -> None:
    pending = (
        "import json\n"
        "print(await fold_session('t1', 'G1'))\n"
        "print(await fold_session('t2/i1', 'G2'))\n"
        "data = await read_session()\n"
        "print(json.dumps(data['session']['request_health']))"
    )
    measured = 'import json\nprint(json.dumps(session["request_health"]))'
    script = write_script(
        tmp_path / "s.yaml",
        [
            *HISTORY,
            {"code": pending, "usage": {"input": 5_000, "output": 5}},
            {"code": measured, "usage": {"input": 3_000, "output": 5}},
            {"text": "answer three"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, *REQUESTS, "third request")
    finally:
        await host.close()
    first, second = [e.stdout for e in events if isinstance(e, BlockFinished)][-2:]
    receipt = first.splitlines()[0]
    assert receipt.startswith("Folded t1: 1 turn (request and answer too) left the active context")
    assert "by local estimate); your gist came in (~" in receipt
    assert json.loads(first.splitlines()[-1]) == {"fold_measurement": {"status": "pending"}}
    assert json.loads(second) == {
        "fold_measurement": {
            "status": "measured",
            "before_input_tokens": 5_000,
            "after_input_tokens": 3_000,
            "net_reduction_tokens": 2_000,
            "fold_count": 2,
        }
    }


async def test_a_fold_taking_part_of_an_earlier_one_is_refused_by_its_key(
    workspace: Path, tmp_path: Path
) -> None:
    """Steps an earlier fold took are not taken again: both gists would stand and the receipt
    would count steps that had left already. A fold that covers the earlier one replaces it,
    and its receipt counts only what left now."""
    script = write_script(
        tmp_path / "s.yaml",
        [
            *HISTORY,
            {"code": "print(await fold_session('t1', 'WHOLE'))"},
            {"code": "print(await fold_session('t1/i1', 'AGAIN'))"},
            {"code": "print(await fold_session('t2/i1-i2', 'FIRST'))"},
            {"code": "print(await fold_session('t2/i2-i3', 'SECOND'))"},
            {"code": "print(await fold_session('t1', 'NEW'))"},
            {"code": "print(await fold_session('t2', 'TWO'))"},
            {"text": "answer three"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, *REQUESTS, "third request")
        text = joined(received(session)[-1])
        folds = host.store.folds(session.id)
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)][-6:]
    assert blocks[
        1
    ].error and "fold_session('t1/i1') is refused: t1/i1 was folded already by 't1'" in (
        blocks[1].error
    )
    assert blocks[3].error and "t2/i2-i3 was folded already by 't2/i1-i2'" in blocks[3].error
    assert "- t2 (the whole turn) or a range of t2/i1-i3" in blocks[3].error
    assert blocks[4].stdout.startswith("Folded t1: nothing more left the active context")
    assert "it replaces the earlier fold 't1'; your gist came in" in blocks[4].stdout
    assert blocks[5].stdout.startswith(
        "Folded t2: 1 turn (request and answer too) left the active context"
    )
    assert "it replaces the earlier fold 't2/i1-i2'" in blocks[5].stdout
    assert [f.key for f in folds] == ["t1", "t2/i1-i2", "t1", "t2"]
    assert text.count("[folded") == 2
    assert "[folded t1] NEW" in text and "[folded t2] TWO" in text
