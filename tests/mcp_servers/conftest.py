"""MCP fixtures: the test server over stdio and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).with_name("server_app.py")


def stdio_entry(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), "stdio"], **extra}


def write_config(path: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **extra}, indent=2), encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of one HTTP test server shared by the tests of a worker."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                err = process.stderr.read().decode() if process.stderr else ""
                process.kill()
                raise RuntimeError(f"the HTTP test server did not start: {err}") from None
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
