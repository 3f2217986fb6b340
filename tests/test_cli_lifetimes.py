"""`vis run` ends on the first Ctrl+C, and after `kill -9` nothing it started lives on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from processes import alive

HANG = '''"""Hangs."""
import time

import vis_core.extension as vis


def wait_forever() -> str:
    """Wait ten minutes, deaf to cancellation."""
    time.sleep(600)
    return "never"


vis.register_extension(
    vis.Extension(
        name="hang", alias="hang", description="Hangs.", symbols=[vis.Symbol(wait_forever)]
    )
)
'''


def _start(workspace: Path, vis_home: Path, script: list[dict], *args: str) -> subprocess.Popen:
    path = workspace.parent / "script.json"
    path.write_text(json.dumps(script))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    return subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", "run", "--json", "--provider", "scripted"]
        + ["--script", str(path), *args, "go"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until(proc: subprocess.Popen, event_type: str) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["type"] == event_type:
            return
    raise AssertionError(f"vis run ended before {event_type}: {proc.stderr.read()}")


def test_first_ctrl_c_stops_vis_run_while_an_extension_tool_hangs(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "hang.py").write_text(HANG)
    proc = _start(workspace, vis_home, [{"code": "print(await hang.wait_forever())"}])
    _until(proc, "ActivityStarted")
    proc.send_signal(signal.SIGINT)
    try:
        assert proc.wait(timeout=30) == 130
    finally:
        proc.kill()


@pytest.mark.usefixtures("jail_off")  # explicitly: pids on the host
def test_after_kill_9_no_shell_child_survives_and_the_turn_shows_interrupted(
    workspace: Path, vis_home: Path
) -> None:
    code = (
        'sh = await shell("sleep 300 & echo $! > grandchild.pid; exec sleep 301")\n'
        "import asyncio\nawait asyncio.sleep(120)"
    )
    proc = _start(workspace, vis_home, [{"code": code}, {"text": "done"}])
    pid_file = workspace / "grandchild.pid"
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    grandchild = int(pid_file.read_text())
    assert alive(grandchild)
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(grandchild), "a shell child outlived vis run"

    import asyncio

    from vis_core.host import Host, HostOptions

    async def reopen() -> tuple[str, str | None]:
        host = await Host.open(HostOptions(workspace=workspace))
        try:
            (row,) = host.store.list_sessions()
            session = await host.open_session(row.id)
            (turn,) = host.store.turns_page(session.id, before_position=None, limit=5)
            return str(turn.status), turn.error
        finally:
            await host.close()

    status, error = asyncio.run(reopen())
    assert status == "cancelled" and error is not None and "interrupted" in error


def test_after_kill_9_every_event_vis_run_printed_is_in_the_store(
    workspace: Path, vis_home: Path
) -> None:
    # quick calls commit their start with their end; the hung call's start is committed on
    # its own once it has run a while: whatever was printed was saved first
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "hang.py").write_text(HANG)
    code = "for _ in range(3):\n    await ls('.')\nprint(await hang.wait_forever())"
    proc = _start(workspace, vis_home, [{"code": code}, {"text": "done"}])
    assert proc.stdout is not None
    watchdog = threading.Timer(60, proc.kill)  # a run that never shows the hung call ends
    watchdog.start()
    printed: list[dict] = []
    try:
        for line in proc.stdout:
            printed.append(json.loads(line))
            event = printed[-1]
            if event["type"] == "ActivityStarted" and event["activity"]["tool"] != "ls":
                break
        else:
            raise AssertionError(f"vis run never showed the hung call: {proc.stderr.read()}")
    finally:
        watchdog.cancel()
    proc.kill()
    proc.wait(timeout=10)

    from vis_core.store import Store

    with Store(vis_home / "vis.db") as store:
        (row,) = store.list_sessions()
        stored = [json.loads(s.data) for s in store.events(row.id)]
    first = [e["type"] for e in stored].index("TurnStarted")  # SessionCreated is not printed
    assert printed == stored[first : first + len(printed)]
    kinds = [(e["type"], e["activity"]["tool"]) for e in printed if "activity" in e]
    assert kinds.count(("ActivityEnded", "ls")) == 3
