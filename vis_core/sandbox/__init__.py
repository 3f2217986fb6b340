"""``python_execution``: a persistent child Python namespace whose tools call back into the host."""

from __future__ import annotations

from vis_core.sandbox.host import (
    BlockResult,
    HandleCall,
    HandleCaller,
    Sandbox,
    ToolCaller,
    ToolEntry,
)
from vis_core.sandbox.jail import JailUnavailable, jail_argv
from vis_core.sandbox.proxies import VisToolError, signature_from_contract
from vis_core.sandbox.wire import HandleMethod, HostHandle, register_codec, unregister_codec

__all__ = [
    "BlockResult",
    "HandleCall",
    "HandleCaller",
    "HandleMethod",
    "HostHandle",
    "JailUnavailable",
    "Sandbox",
    "ToolCaller",
    "ToolEntry",
    "VisToolError",
    "jail_argv",
    "register_codec",
    "signature_from_contract",
    "unregister_codec",
]
