"""``python_execution``: a persistent child Python namespace whose tools call back into the host.

The names below load with their module on first use, so importing a light submodule (say
``vis_core.sandbox.child``) does not import the host side;
``vis_core.ipc.values`` (values crossing the boundary) lies below, shared with records.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vis_core.ipc.values import register_codec, unregister_codec
    from vis_core.model.handles import HandleMethod, HostHandle
    from vis_core.sandbox.host import (
        BlockResult,
        HandleCall,
        HandleCaller,
        Sandbox,
        ToolCaller,
        ToolEntry,
    )
    from vis_core.sandbox.proxies import VisToolError, signature_from_contract
    from vis_core.system.jail import JailUnavailable, jail_argv

_HOMES = {
    "BlockResult": "host",
    "HandleCall": "host",
    "HandleCaller": "host",
    "Sandbox": "host",
    "ToolCaller": "host",
    "ToolEntry": "host",
    "JailUnavailable": "vis_core.system.jail",
    "jail_argv": "vis_core.system.jail",
    "VisToolError": "proxies",
    "signature_from_contract": "proxies",
    "HandleMethod": "vis_core.model.handles",
    "HostHandle": "vis_core.model.handles",
    "register_codec": "vis_core.ipc.values",
    "unregister_codec": "vis_core.ipc.values",
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
    module = home if "." in home else f"{__name__}.{home}"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
