"""Built-in tools: ``cat``, ``grep``, ``patch``, ``ls``, ``shell``, ``run_tests`` (see builtins).

The names below load with their module on first use, so importing one light submodule (say
``vis_core.tools.display`` for the TUI) does not import every tool.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vis_core.tools.builtins import builtin_tools, make_context
    from vis_core.tools.context import OutsideWorkspace, ToolContext
    from vis_core.tools.display import shorten_path
    from vis_core.tools.edit import PatchResult
    from vis_core.tools.patching import PatchError
    from vis_core.tools.testing import TestFailure, TestReport
    from vis_core.tools.versions import FileVersions, file_mutation_queue

_HOMES = {
    "builtin_tools": "builtins",
    "make_context": "builtins",
    "OutsideWorkspace": "context",
    "ToolContext": "context",
    "shorten_path": "display",
    "PatchResult": "edit",
    "PatchError": "patching",
    "TestFailure": "testing",
    "TestReport": "testing",
    "FileVersions": "versions",
    "file_mutation_queue": "versions",
}

__all__ = [
    "FileVersions",
    "OutsideWorkspace",
    "PatchError",
    "PatchResult",
    "TestFailure",
    "TestReport",
    "ToolContext",
    "builtin_tools",
    "file_mutation_queue",
    "make_context",
    "shorten_path",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
