"""``vis run`` against a real local server that streams forever or sends a broken stream:
the turn ends (failed, or cancelled when the person stops it), and the error names the server
and the fault."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from .wire_servers import WireReply, WireServer

CHUNK = {
    "id": "chatcmpl-endless",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "and again " * 40}, "finish_reason": None}],
}
ENDLESS = f"data: {json.dumps(CHUNK)}\n\n"


def configure(home: Path, server: WireServer, extra: str = "") -> None:
    (home / "config.toml").write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{server.openai_base_url}"\n'
        f'api_key_env = ""\n{extra}',
        encoding="utf-8",
    )


def vis_run(home: Path, workspace: Path, *args: str, **kw: Any) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(home)
    return subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", "run", "--json", "--model", "local/m", *args],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def turn_statuses(home: Path) -> list[str]:
    with sqlite3.connect(home / "vis.db") as db:
        return [status for (status,) in db.execute("SELECT status FROM turns")]


def test_an_endless_stream_is_cut_at_the_response_cap(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server)
        server.reply(WireReply(forever=ENDLESS))
        run = vis_run(vis_home, workspace, "write forever")
        out, err = run.communicate(timeout=120)
    assert run.returncode == 1, err
    ended = json.loads(out.splitlines()[-1])
    assert ended["type"] == "TurnEnded" and ended["status"] == "failed"
    error = ended["error"]
    assert f"The model server at {server.openai_base_url} (provider local)" in error
    assert "more than 4.0 MiB for one response" in error
    assert "max_response_bytes" in error and "8192-token output limit" in error
    assert turn_statuses(vis_home) == ["failed"]
    stored = sum(p.stat().st_size for p in vis_home.glob("vis.db*"))
    assert stored < 64 * 1024 * 1024  # the 120 s of text once made a 670 MB vis.db


def test_max_response_bytes_sets_the_cap(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server, "max_response_bytes = 20000\n")
        server.reply(WireReply(forever=ENDLESS))
        run = vis_run(vis_home, workspace, "write forever")
        out, err = run.communicate(timeout=120)
    assert run.returncode == 1, err
    ended = json.loads(out.splitlines()[-1])
    assert "more than 20,000 bytes for one response" in ended["error"]
    assert "max_response_bytes = 20000 under [providers.local]" in ended["error"]
    assert sum(len(line) for line in out.splitlines()) < 200_000


def test_ctrl_c_during_an_endless_stream_ends_the_turn(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server, "max_response_bytes = 0\n")  # no cap: only the person
        server.reply(WireReply(forever=ENDLESS))
        run = vis_run(vis_home, workspace, "write forever")
        assert run.stdout is not None
        for line in run.stdout:
            if json.loads(line)["type"] == "AssistantDelta":
                break  # the answer is streaming
        run.send_signal(signal.SIGINT)
        run.communicate(timeout=60)
    assert run.returncode == 130
    assert turn_statuses(vis_home) == ["cancelled"]
