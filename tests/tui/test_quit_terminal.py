"""Quitting the real app in a terminal (a pty): what the exit no longer waits for."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

# Runs `vis` in the pty; records what was left frozen when run_tui returned (the process's
# exit comes next).
CHILD = """
import gc, json, sys

from vis_core.cli import main
code = main([])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "frozen": gc.get_freeze_count()}, out)
"""


def _run_and_quit(workspace: Path, vis_home: Path, report: Path) -> dict[str, object]:
    master, slave = pty.openpty()
    env = {**os.environ, "VIS_HOME": str(vis_home), "TERM": "xterm-256color"}
    env.pop("VIS_MODEL", None)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(report)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=workspace,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    screen, sent = b"", False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, f"the app showed nothing for 60 s: {screen[-2000:]!r}"
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            screen += chunk
            if not sent and b"Ask Vis" in screen:  # the prompt is shown: Ctrl+D quits
                os.write(master, b"\x04")
                sent = True
        assert child.wait(60) == 0
    finally:
        os.close(master)
        if child.poll() is None:
            child.kill()
            child.wait()
    return json.loads(report.read_text())


def test_quitting_leaves_what_the_app_made_to_the_exit_not_to_a_last_full_collection(
    workspace: Path, tmp_path: Path
) -> None:
    """Ctrl+D in the real app: the collector's close unfroze everything the app made, so
    Python's last full collection at the exit walked all of it (~0.17 s) after the session was
    saved and closed; it is set aside again once the app returns."""
    home = tmp_path / "home"
    home.mkdir()
    result = _run_and_quit(workspace, home, tmp_path / "report.json")
    assert result["code"] == 0
    assert result["frozen"] > 0  # type: ignore[operator]
