"""``python_execution``: a persistent child Python namespace whose tools call back into the host.

The names below load with their module on first use, so importing a light submodule (say
``vis_core.sandbox.wire`` for records, or in the sandbox child) does not import the host side.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "BlockResult": "host",
    "HandleCall": "host",
    "HandleCaller": "host",
    "Sandbox": "host",
    "ToolCaller": "host",
    "ToolEntry": "host",
    "JailUnavailable": "jail",
    "jail_argv": "jail",
    "VisToolError": "proxies",
    "signature_from_contract": "proxies",
    "HandleMethod": "wire",
    "HostHandle": "wire",
    "register_codec": "wire",
    "unregister_codec": "wire",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
