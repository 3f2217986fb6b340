"""`vis acp` keeps stdout for the protocol: prints and child processes write to stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_support import vis

CHILD = """
import os, subprocess, sys
from vis_core.acp.server import claim_stdio

fd_in, fd_out = claim_stdio()
print("a stray print")
sys.stdout.flush()
subprocess.run(["sh", "-c", "echo a child process; cat"], check=True)  # stdin: /dev/null
os.write(fd_out, b'{"jsonrpc": "2.0"}\\n')
print("protocol input:", os.read(fd_in, 100).decode().strip())
"""


def test_only_the_protocol_reaches_stdout_and_children_cannot_read_its_input():
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        input="from the client\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == '{"jsonrpc": "2.0"}\n'
    assert "a stray print" in result.stderr and "a child process" in result.stderr
    assert "protocol input: from the client" in result.stderr


INITIALIZE = (
    '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n'
)


def test_requests_replayed_from_a_file_are_answered_into_a_file(tmp_path: Path) -> None:
    """The loop waits on pipes only: a file as stdin or stdout was a traceback ("Pipe
    transport is only for pipes, sockets and character devices"), and ``/dev/null`` as
    stdin hung for ever. Both are copied through a pipe now, every answer written out."""
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    requests.write_text(INITIALIZE, encoding="utf-8")
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = vis("acp", cwd=tmp_path, env_home=tmp_path / "home", stdin=stdin, stdout=stdout)
    assert done.returncode == 0, done.stderr
    (answer,) = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1


def test_no_input_at_all_ends_at_once(tmp_path: Path) -> None:
    done = vis(
        "acp",
        cwd=tmp_path,
        env_home=tmp_path / "home",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
