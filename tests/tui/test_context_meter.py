"""The status bar's context meter shows the numbers of session["utilization"]: the latest
measured input over the soft budget, worded as the hint words it, live and after resume."""

from __future__ import annotations

import json
from pathlib import Path

from pilot_keys import type_keys

from vis_core.events import BlockFinished
from vis_tui.app import VisApp

from .support import started, until, vis_app, write_script

SHOW = 'import json\nprint(json.dumps(session["utilization"]))'


def _meter(app: VisApp) -> str:
    bar = app.main.status_bar
    return str(bar._line(compact=False)).split("│")[3].strip()


def _turn(tokens: int) -> list[dict]:
    usage = {"input": tokens, "output": 5}
    return [{"code": "print('step')", "usage": usage}, {"text": "ok", "usage": usage}]


async def test_the_meter_shows_the_utilization_numbers(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\ninput_limit = 204000\n', encoding="utf-8"
    )
    # t1 measures 150,000 (81.7 % of 183,600); the gist call of /compact does not count;
    # t2's requests measure 166,400 (90.6 %); its block shows utilization as the model sees it
    script = [
        *_turn(150_000),
        {"text": "gist of t1", "usage": {"input": 9_000, "output": 5}},
        {"code": SHOW, "usage": {"input": 166_400, "output": 5}},
        {"text": "done", "usage": {"input": 166_400, "output": 5}},
    ]
    app = vis_app(workspace, write_script(tmp_path, script))
    seen: list = []
    async with app.run_test(size=(140, 30)) as pilot:
        await started(app, pilot)
        app.session.subscribe(seen.append)
        await type_keys(pilot, *"one", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await until(pilot, lambda: _meter(app) == "81% context")
        assert app.session.utilization()["latest_measured_input_tokens"] == 150_000
        app.main.prompt.insert("/compact")
        await pilot.press("enter")
        await until(pilot, lambda: any(e.type == "FoldCreated" for e in seen))
        await pilot.pause()
        assert _meter(app) == "81% context"  # the gist call is not the context
        await type_keys(pilot, *"two", "enter")
        await until(pilot, lambda: len(app.main.transcript.turns) == 2)
        await until(pilot, lambda: not app.main.turn_running)
        live = _meter(app)
        utilization = app.session.utilization()
        session_id = app.session.id
    shown = json.loads(
        next(e.stdout for e in seen if isinstance(e, BlockFinished) and "{" in e.stdout)
    )
    hint = shown.pop("hint")
    assert shown == {  # what the model saw, measured by the request that wrote the block
        **{k: utilization[k] for k in ("model_input_limit", "auto_compress_above")},
        "latest_measured_input_tokens": 166_400,
    }
    assert hint.split(":")[0] == utilization["hint"].split(":")[0]  # the same figures
    assert "every settled turn is folded already" in hint  # t1 is, t2 runs
    assert 'fold_session("t2", gist)' in utilization["hint"]  # t2 has ended since
    assert utilization["auto_compress_above"] == 183_600
    assert utilization["hint"].startswith("Context is at 90% of the soft budget")
    assert live == "90% context"  # 90.6 %: the hint's whole percent, not rounded up

    resumed = vis_app(workspace, write_script(tmp_path, []), resume=session_id)
    async with resumed.run_test(size=(140, 30)) as pilot:
        await started(resumed, pilot)
        assert _meter(resumed) == "90% context"


async def test_the_meter_never_reads_100_percent_above_the_budget(
    workspace: Path, tmp_path: Path
) -> None:
    app = vis_app(workspace, write_script(tmp_path, []))
    async with app.run_test(size=(140, 30)) as pilot:
        await started(app, pilot)
        bar = app.main.status_bar
        bar.context_limit, bar.context_tokens = 2_700, 2_711  # over, by a hair
        await pilot.pause()
        assert _meter(app) == "101% context"
        bar.context_tokens = 2_699  # under: rounded down, as the hint says it
        await pilot.pause()
        assert _meter(app) == "99% context"
