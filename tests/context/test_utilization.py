"""session["utilization"]: growing measured usage brings the 75/90/>100 % hints with the key
that folds every unfolded earlier turn; the budget follows the model's known input limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vis_core.events import BlockFinished
from vis_core.providers.limits import soft_budget

from .support import open_host, run_turns, write_script

SHOW = 'import json\nprint(json.dumps(session["utilization"]))'


def measured(tokens: int, fold: str | None = None) -> list[dict]:
    """A turn whose first request measures ``tokens`` of input; its block shows utilization."""
    code = SHOW if fold is None else f"await fold_session({fold!r}, 'gist')\n{SHOW}"
    return [{"code": code, "usage": {"input": tokens, "output": 10}}, {"text": "ok"}]


async def test_growing_usage_brings_each_hint_with_the_right_key(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            *measured(100_000),  # t1: 50 %: no hint
            *measured(150_000),  # t2: 75 %
            *measured(181_000, fold="t1"),  # t3: 90.5 % (session is built before the fold)
            *measured(230_000),  # t4: above; t1 is folded, so the key keeps its gist
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "one", "two", "three", "four")
    finally:
        await host.close()
    seen = [json.loads(e.stdout) for e in events if isinstance(e, BlockFinished)]
    assert [u["latest_measured_input_tokens"] for u in seen] == [100_000, 150_000, 181_000, 230_000]
    assert all(u["auto_compress_above"] == 200_000 for u in seen)
    assert all(u["model_input_limit"] is None for u in seen)
    assert "hint" not in seen[0]
    assert seen[1]["hint"] == (
        "Context is at 75% of the soft budget (150,000 of 200,000 input tokens). Fold settled "
        'work when this phase is done: fold_session("-t1", gist) folds every earlier turn not '
        "folded yet."
    )
    assert seen[2]["hint"] == (
        "Context is at 90% of the soft budget (181,000 of 200,000 input tokens). Fold settled "
        'work before the next answer: fold_session("-t2", gist) folds every earlier turn not '
        "folded yet."
    )
    assert seen[3]["hint"] == (
        "Context is above the soft budget: 115% of the soft budget (230,000 of 200,000 input "
        "tokens). A fold is required while the pressure remains: "
        'fold_session("t2,t3", gist) folds every earlier turn not folded yet.'
    )


async def test_a_configured_input_limit_lowers_the_budget(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\ninput_limit = 204000\n', encoding="utf-8"
    )
    script = write_script(tmp_path / "s.yaml", measured(170_000))
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "one")
    finally:
        await host.close()
    seen = json.loads(next(e for e in events if isinstance(e, BlockFinished)).stdout)
    assert seen["model_input_limit"] == 204_000
    assert seen["auto_compress_above"] == 183_600
    assert seen["hint"].startswith("Context is at 92% of the soft budget")
    assert "there is no earlier turn yet" not in seen["hint"]  # nothing settled in t1 yet
    assert "nothing has settled yet" in seen["hint"]


@pytest.mark.parametrize(
    ("model", "limit", "budget"),
    [
        ("claude-opus-4-6", None, 200_000),  # unknown limit: 200k whatever the family
        ("claude-opus-4-6", 1_000_000, 250_000),
        ("claude-opus-4-6", 200_000, 180_000),
        ("gpt-5", 272_000, 230_000),
        ("gpt-5", 204_000, 183_600),
        ("gpt-5", None, 200_000),
        ("qwen3", 32_768, 29_491),
        ("qwen3", 1_000_000, 200_000),
    ],
)
def test_soft_budget_rules(model: str, limit: int | None, budget: int) -> None:
    assert soft_budget(model, limit) == budget


async def test_the_hint_says_so_when_every_settled_turn_is_folded(
    workspace: Path, tmp_path: Path
) -> None:
    """After /compact folded every turn, /context's hint said "nothing has settled yet; fold
    once a step has settled": every turn had settled, and was folded."""
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"text": "answer one", "usage": {"input": 190_000, "output": 10}},
            {"text": "answer two", "usage": {"input": 195_000, "output": 10}},
            {"text": "The gist."},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await run_turns(session, "one", "two")
        before = await host.commands.run(session, "/context")
        compacted = await host.commands.run(session, "/compact")
        after = await host.commands.run(session, "/context")
    finally:
        await host.close()
    assert compacted.title == "Compacted turns 1–2"
    (hint,) = [line for line in (before.body or "").splitlines() if line.startswith("Hint:")]
    assert 'fold_session("-t2", gist)' in hint, hint  # between turns, t2 is an earlier one
    (hint,) = [line for line in (after.body or "").splitlines() if line.startswith("Hint:")]
    assert "nothing has settled" not in hint, hint
    assert hint.endswith(
        "every settled turn is folded already, so what is left is the gists and the live step; "
        "/new starts a session with none of it."
    ), hint


async def test_the_hint_key_for_the_current_turn_folds_only_steps_not_folded_yet(
    workspace: Path, tmp_path: Path
) -> None:
    """After ``-t2/i1`` (turn 1 and a step of this turn), the hint named ``t2/i1-``: a key
    taking part of that fold, which fold_session refuses."""
    use_hint = (
        "import re\n"
        "hint = session['utilization']['hint']\n"
        "print(hint)\n"
        "print(await fold_session(re.search(r'fold_session\\(\"([^\"]+)\"', hint)[1], 'rest'))"
    )
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"text": "answer one"},
            {"code": "print('a')"},
            {"code": "print('b')"},
            {"code": "await fold_session('-t2/i1', 'gist')"},
            {"code": use_hint, "usage": {"input": 160_000, "output": 10}},
            {"code": "print(session['utilization']['hint'])", "usage": {"input": 150_000}},
            {"text": "ok"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "one", "two")
    finally:
        await host.close()
    block, after = [e for e in events if isinstance(e, BlockFinished)][-2:]
    assert block.error is None, block.error
    assert 'every earlier turn is folded; fold_session("t2/i2-", gist) folds' in block.stdout
    assert "Folded t2/i2-: 2 steps left the active context" in block.stdout
    assert 'fold_session("t2/i4-", gist) folds the settled steps' in after.stdout
