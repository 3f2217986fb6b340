"""SIGTERM and SIGHUP end `vis run`'s turn as cancelled in the store, not left `running`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vis_core.store import Store

WAITING = "open('started', 'w').close()\nimport asyncio\nawait asyncio.sleep(300)"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_ends_the_stored_turn_and_the_run(
    workspace: Path, vis_home: Path, sig: signal.Signals
) -> None:
    path = workspace.parent / "script.json"
    path.write_text(json.dumps([{"code": WAITING}, {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", "run", "--provider", "scripted"]
        + ["--script", str(path), "go"],
        cwd=workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (workspace / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 128 + sig
    finally:
        proc.kill()
        proc.wait()
    assert proc.stderr is not None
    assert f"stopped by {sig.name}" in proc.stderr.read()
    with Store(vis_home / "vis.db") as store:
        (row,) = store.list_sessions()
        (turn,) = store.turns(row.id)
    assert str(turn.status) == "cancelled"
    assert turn.error == f"stopped by {sig.name}"  # not "cancelled by the user"
