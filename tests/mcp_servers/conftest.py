"""MCP entries: the test server over stdio, or the worker's shared HTTP one (``http_server``
in tests/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from warm_servers import command

SERVER = Path(__file__).with_name("server_app.py")


def stdio_entry(**extra: Any) -> dict[str, Any]:
    """An entry for the test server over stdio, started warm (``tests/warm_servers.py``)."""
    program, *args = command(SERVER, "stdio")
    return {"command": program, "args": args, **extra}


def http_entry(base: str, **extra: Any) -> dict[str, Any]:
    """An entry for the HTTP test server at ``base`` (``http_server``): for tests of what Vis
    does with servers rather than of stdio, one process of a worker serves them all."""
    return {"url": f"{base}/mcp", **extra}


def write_config(path: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **extra}, indent=2), encoding="utf-8")
    return path
