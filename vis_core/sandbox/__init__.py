"""``python_execution``: a persistent child Python namespace whose tools call back into the host.

The names below load with their module on first use, so importing a light submodule (say
``vis_core.sandbox.child``) does not import the host side;
``vis_core.ipc.values`` (values crossing the boundary) lies below, shared with records.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vis_core.sandbox.host import Sandbox, ToolEntry

__all__ = ["Sandbox", "ToolEntry"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.host"), name)
    globals()[name] = value
    return value
