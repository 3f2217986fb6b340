"""Built-in tools: ``cat``, ``grep``, ``patch``, ``ls``, ``shell``, ``run_tests`` (see builtins)."""

from __future__ import annotations

from vis_core.tools.builtins import builtin_tools, make_context
from vis_core.tools.context import OutsideWorkspace, ToolContext
from vis_core.tools.display import shorten_path
from vis_core.tools.edit import PatchResult
from vis_core.tools.patching import PatchError
from vis_core.tools.shell import ShellHandle, ShellManager, ShellStatus
from vis_core.tools.testing import TestFailure, TestReport
from vis_core.tools.truncate import MAX_BYTES, MAX_LINES
from vis_core.tools.versions import FileVersions, file_mutation_queue

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "FileVersions",
    "OutsideWorkspace",
    "PatchError",
    "PatchResult",
    "ShellHandle",
    "ShellManager",
    "ShellStatus",
    "TestFailure",
    "TestReport",
    "ToolContext",
    "builtin_tools",
    "file_mutation_queue",
    "make_context",
    "shorten_path",
]
