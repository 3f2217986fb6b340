"""`vis run --max-turns N` and `--max-cost USD` stop an unattended run with their own exit
status and a message naming the limit."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import script, vis

from vis_core.store import Store

LOOP = [{"code": f"print('step {n}')"} for n in range(1, 6)] + [{"text": "done"}]


def _scripted(tmp_path: Path, responses: list[dict]) -> list[str]:
    return ["--provider", "scripted", "--script", str(script(tmp_path, responses))]


def test_max_turns_stops_the_run_with_its_own_status(workspace, vis_home, tmp_path):
    result = vis(
        "run",
        "work",
        "--max-turns",
        "2",
        *_scripted(tmp_path, LOOP),
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 3, result.stderr
    assert "vis run: stopped by --max-turns 2: the model wanted more turns" in result.stderr
    assert "stopped after 2 iterations (--max-turns 2)" in result.stderr
    assert "✓ python print('step 2')" in result.stdout
    assert "✗ python print('step 3') · 0.0s · not run: the turn reached --max-turns 2" in (
        result.stdout
    )
    unlimited = vis("run", "work", *_scripted(tmp_path, LOOP), cwd=workspace, env_home=vis_home)
    assert unlimited.returncode == 0 and "✓ python print('step 5')" in unlimited.stdout


def test_max_cost_stops_the_run_once_it_costs_that_much(workspace, vis_home, tmp_path):
    # a dollar per thousand input tokens: each request here costs well above a cent
    (vis_home / "config.toml").write_text('[models."scripted/script"]\ninput_price = 1000\n')
    responses = [{**r, "usage": {"input": 10, "output": 1}} for r in LOOP]
    result = vis(
        "run",
        "work",
        "--max-cost",
        "0.025",
        *_scripted(tmp_path, responses),
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 4, result.stderr
    assert "vis run: stopped by --max-cost 0.025: this run's model requests cost $0.0300" in (
        result.stderr
    )
    assert "print('step 3')" not in result.stdout
    with Store(vis_home / "vis.db") as store:  # stopped cleanly: the turn is saved, ended
        (row,) = store.list_sessions()
        assert row.turn_count == 1


def test_the_limits_must_be_above_zero(workspace, vis_home, tmp_path):
    result = vis(
        "run",
        "work",
        "--max-turns",
        "0",
        *_scripted(tmp_path, LOOP),
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 2 and "--max-turns: 0 is not above zero" in result.stderr


def test_a_stop_by_max_cost_is_recorded_with_the_limit(workspace, vis_home, tmp_path):
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\ninput_price = 3.0\noutput_price = 15.0\n'
    )
    responses = [{"code": "print(1)", "usage": {"input": 1000000, "output": 1000}}]
    result = vis(
        "run",
        "--json",
        "--max-cost",
        "0.01",
        *_scripted(tmp_path, [*responses, {"text": "fin"}]),
        "mc",
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 4, result.stderr
    reason = "stopped by --max-cost 0.01: this run's model requests cost $3.0150"
    ended = json.loads(result.stdout.splitlines()[-1])
    assert (ended["type"], ended["status"], ended["error"]) == ("TurnEnded", "cancelled", reason)
    assert "cancelled by the user" not in result.stderr
    assert result.stderr.count(reason) == 1, result.stderr  # said once, at the end
    with Store(vis_home / "vis.db") as store:
        (row,) = store.list_sessions()
        (turn,) = store.turns(row.id)
    assert turn.error == reason
