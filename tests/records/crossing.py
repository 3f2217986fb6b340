"""Send values across the boundary the way the sandbox does: encode → MessagePack → decode."""

from __future__ import annotations

from typing import Any

import msgspec

from vis_core.ipc import values as wire
from vis_core.ipc.values import decode, encode_result


def to_sandbox(value: Any, *, owner: str | None = None) -> Any:
    """A tool's return value as the sandbox receives it."""
    return decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode_result(value, owner=owner))))


def to_host(value: Any) -> Any:
    """A sandbox value passed as a tool argument, as the host receives it."""
    return wire.loads(msgspec.msgpack.encode(wire.encode(value)))
