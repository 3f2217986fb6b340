"""Tool names: ``mcp__<server>__<tool>`` with a hash suffix for names that collide."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def safe(text: str) -> str:
    """Every character other than ASCII letters, digits and ``_`` replaced by ``_``."""
    return _UNSAFE.sub("_", text)


def server_prefix(server: str) -> str:
    return f"{PREFIX}{safe(server)}__"


def tool_names(server: str, tools: Iterable[str]) -> dict[str, str]:
    """Server tool name → Vis name; tools whose safe names collide all get a hash suffix."""
    tools = list(tools)
    prefix = server_prefix(server)
    counts = Counter(safe(tool) for tool in tools)
    names: dict[str, str] = {}
    for tool in tools:
        base = prefix + safe(tool)
        if counts[safe(tool)] > 1:
            base += "_" + hashlib.sha256(tool.encode("utf-8")).hexdigest()[:6]
        names[tool] = base
    return names
