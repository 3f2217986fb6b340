"""Tool names: ``mcp__<server>__<tool>`` with a hash suffix for names that collide."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

PREFIX = "mcp__"
MAX_NAME = 64  # the longest tool name OpenAI's API accepts (Anthropic's: 128)
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def safe(text: str) -> str:
    """Every character other than ASCII letters, digits and ``_`` replaced by ``_``."""
    return _UNSAFE.sub("_", text)


def server_prefix(server: str) -> str:
    return f"{PREFIX}{safe(server)}__"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def tool_names(tools: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``(server, tool)`` → Vis name. The tools whose safe names collide all get a hash suffix
    of their own name: two of one server (``do.thing``, ``do-thing``), and two of different
    servers too (server ``a``'s ``b__c`` and server ``a__b``'s ``c`` are both
    ``mcp__a__b__c``), which would otherwise make one name for two tools. A name longer than
    :data:`MAX_NAME` is cut to fit with a hash of the server and tool (a declared tool of a
    longer name fails every request of the session)."""
    pairs = list(dict.fromkeys(tools))
    base = {pair: server_prefix(pair[0]) + safe(pair[1]) for pair in pairs}
    counts = Counter(base.values())
    names = {
        pair: name if counts[name] == 1 else f"{name}_{_digest(pair[1])}"
        for pair, name in base.items()
    }
    return {
        pair: name
        if len(name) <= MAX_NAME
        else f"{name[: MAX_NAME - 7]}_{_digest(pair[0] + chr(0) + pair[1])}"
        for pair, name in names.items()
    }
