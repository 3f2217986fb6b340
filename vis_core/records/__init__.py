"""What a tool's dataclass becomes across the sandbox boundary and back: frozen records, the
registry of live classes, and the rebuild into the tool's own dataclass.

The ``record`` codec itself is part of the one value codec (:mod:`vis_core.ipc.values`):
:func:`~vis_core.ipc.values.encode_result` (a tool's return value → wire data, host side) and
:func:`~vis_core.ipc.values.decode` (wire data → values with frozen :class:`Record` objects).
:func:`coerce_arguments` rebuilds records in a tool's arguments before calling it.
"""

from __future__ import annotations

from vis_core.records.rebuild import coerce_arguments

__all__ = ["coerce_arguments"]
