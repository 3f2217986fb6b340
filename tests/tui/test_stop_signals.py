"""SIGTERM and SIGHUP quit the app as Ctrl+Q does: the running turn is stored as cancelled."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from pilot_keys import type_keys

from vis_core.store import Store

from .support import started, until, vis_app, write_script


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
async def test_a_stop_signal_quits_and_ends_the_running_turn(
    workspace: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    code = "open('started', 'w').close()\nimport asyncio\nawait asyncio.sleep(300)"
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "done"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        session_id = app.session.id
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: (workspace / "started").exists())
        # without the app's handler the signal would end the test run itself
        handlers = getattr(asyncio.get_running_loop(), "_signal_handlers", {})
        assert sig in handlers, f"the app does not handle {sig.name}"
        os.kill(os.getpid(), sig)  # the loop's handler takes it, as in `vis` itself
        await until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 128 + sig
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        (turn,) = store.turns(session_id)
    assert str(turn.status) == "cancelled"
