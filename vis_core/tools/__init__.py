"""Built-in tools: ``cat``, ``grep``, ``patch``, ``ls``, ``shell``, ``run_tests`` (see builtins).

The two names below load with their module on first use, so importing one light submodule (say
``vis_core.tools.display`` for the TUI) does not import every tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vis_core.lazy import lender, lent_names

if TYPE_CHECKING:
    from vis_core.tools.builtins import builtin_tools as builtin_tools
    from vis_core.tools.context import ToolContext as ToolContext

__getattr__ = lender(__name__, lent_names(__file__))
