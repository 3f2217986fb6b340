"""Send values across the boundary the way the sandbox does: wire encode → JSON text → decode."""

from __future__ import annotations

import json
from typing import Any

from vis_core import wire
from vis_core.records import decode, encode_result


def to_sandbox(value: Any, *, owner: str | None = None) -> Any:
    """A tool's return value as the sandbox receives it."""
    return decode(json.loads(json.dumps(encode_result(value, owner=owner))))


def to_host(value: Any) -> Any:
    """A sandbox value passed as a tool argument, as the host receives it."""
    return wire.decode(json.loads(json.dumps(wire.encode(value))))
