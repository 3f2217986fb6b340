"""``python_execution``: a persistent child Python namespace whose tools call back into the host.

The names below load with their module on first use, so importing a light submodule (say
``vis_core.sandbox.child``) does not import the host side;
``vis_core.ipc.values`` (values crossing the boundary) lies below, shared with records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vis_core.lazy import lender, lent_names

if TYPE_CHECKING:
    from vis_core.sandbox.host import Sandbox as Sandbox
    from vis_core.sandbox.host import ToolEntry as ToolEntry

__getattr__ = lender(__name__, lent_names(__file__))
