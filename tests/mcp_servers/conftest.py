"""MCP fixtures: the test server over stdio and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_server import web_server

SERVER = Path(__file__).with_name("server_app.py")


def stdio_entry(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), "stdio"], **extra}


def http_entry(base: str, **extra: Any) -> dict[str, Any]:
    """An entry for the HTTP test server at ``base`` (``http_server``): for tests of what Vis
    does with servers rather than of stdio, one process of a worker serves them all."""
    return {"url": f"{base}/mcp", **extra}


def write_config(path: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **extra}, indent=2), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of one HTTP test server shared by the tests of a worker."""
    with web_server(SERVER, "http") as base:
        yield base
