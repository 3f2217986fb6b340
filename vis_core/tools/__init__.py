"""Built-in tools: ``cat``, ``grep``, ``patch``, ``ls``, ``shell``, ``run_tests`` (see builtins).

The two names below load with their module on first use, so importing one light submodule (say
``vis_core.tools.display`` for the TUI) does not import every tool.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vis_core.tools.builtins import builtin_tools
    from vis_core.tools.context import ToolContext

_HOMES = {"builtin_tools": "builtins", "ToolContext": "context"}

__all__ = ["ToolContext", "builtin_tools"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
