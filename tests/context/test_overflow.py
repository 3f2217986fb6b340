"""Overflow recovery: a model that refuses too-long requests gets a folded context and the
turn goes on; when even that does not fit, the turn fails saying what to do."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import FoldCreated, Notification, TurnEnded, TurnStatus
from vis_core.providers.common import estimate_tokens, request_chars

from .support import joined, open_host, received, run_turns, write_script

BIG = 40_000  # characters each earlier turn prints: about 10k tokens


def big_turn(n: int) -> list[dict]:
    return [{"code": f"print('{n}' * {BIG})"}, {"text": f"answer {n}"}]


async def empty_request_tokens(workspace: Path, tmp_path: Path) -> int:
    """What the system prompt and tools alone weigh, as the scripted model counts."""
    host = await open_host(workspace, write_script(tmp_path / "empty.yaml", []))
    try:
        session = await host.new_session()
        return estimate_tokens(request_chars(await session.next_request()))
    finally:
        await host.close()


async def overflowing_session(
    workspace: Path, tmp_path: Path, vis_home: Path, tail: list[dict], request: str
) -> tuple[list, list, str]:
    base = await empty_request_tokens(workspace, tmp_path)
    # three earlier turns fit (about 30k tokens), the fourth request tips it over
    limit = base + 32_000
    (vis_home / "config.toml").write_text(
        f'[models."scripted/script"]\ninput_limit = {limit}\n', encoding="utf-8"
    )
    script = write_script(tmp_path / "s.yaml", [*big_turn(1), *big_turn(2), *big_turn(3), *tail])
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "one", "two", "three", request)
        requests = received(session)
        stored = host.store.turns(session.id)
    finally:
        await host.close()
    return events, requests, stored


async def test_the_turn_succeeds_after_an_automatic_fold(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    tail = [{"text": "The earlier turns printed long runs of digits."}, {"text": "done"}]
    events, requests, stored = await overflowing_session(
        workspace, tmp_path, vis_home, tail, "four " * 3_000
    )
    ended = [e for e in events if isinstance(e, TurnEnded)]
    assert [e.status for e in ended] == [TurnStatus.COMPLETED] * 4
    assert ended[-1].content == "done"
    fold = next(e for e in events if isinstance(e, FoldCreated))
    assert fold.origin == "overflow" and fold.key == "t1,t2"
    assert fold.gist == "The earlier turns printed long runs of digits."
    note = next(e for e in events if isinstance(e, Notification))
    assert note.text.startswith("The request was too long for scripted/script, so Vis folded t1,t2")
    assert "with a gist the model wrote and retries once" in note.text
    # the refused request, the gist call, then the retry without t1 and t2
    refused, gist_call, retry = requests[-3:]
    assert "1" * 100 in joined(refused) and "2" * 100 in joined(refused)
    assert "Write the gist of this settled work." in gist_call.messages[0].text
    text = joined(retry)
    assert "1" * 100 not in text and "2" * 100 not in text and "3" * 100 in text
    assert "[folded t1,t2] The earlier turns printed long runs of digits." in text
    assert [t.status for t in stored] == [TurnStatus.COMPLETED] * 4  # history kept whole


async def test_a_failed_gist_call_falls_back_to_a_mechanical_summary(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    tail = [{"error": {"status": 500, "message": "overloaded"}}, {"text": "done"}]
    events, requests, _ = await overflowing_session(
        workspace, tmp_path, vis_home, tail, "four " * 3_000
    )
    fold = next(e for e in events if isinstance(e, FoldCreated))
    assert fold.gist.startswith("Summary of folded turns (written by Vis):\nt1: asked “one”")
    note = next(e for e in events if isinstance(e, Notification))
    assert "with a mechanical summary (the summary call failed: overloaded)" in note.text
    assert [e for e in events if isinstance(e, TurnEnded)][-1].status is TurnStatus.COMPLETED


async def test_still_too_long_fails_with_what_to_do(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    tail = [{"text": "gist"}, {"text": "never used"}]
    events, _, stored = await overflowing_session(
        workspace, tmp_path, vis_home, tail, "four " * 40_000
    )
    ended = [e for e in events if isinstance(e, TurnEnded)][-1]
    assert ended.status is TurnStatus.FAILED
    assert "the request is still too long after Vis folded t1-t3" in (ended.error or "")
    assert "prompt is too long" in (ended.error or "")
    # what is settled is folded already: the request itself must shrink, or the model change
    assert "Send less, or pick a model with a larger input limit (/model)" in (ended.error or "")
    assert "/compact" not in (ended.error or "")
    assert stored[-1].status is TurnStatus.FAILED
