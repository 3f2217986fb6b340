"""`vis acp` keeps stdout for the protocol: prints and child processes write to stderr."""

from __future__ import annotations

import subprocess
import sys

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
