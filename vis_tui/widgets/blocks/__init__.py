"""Block widgets, one module per family; importing this package registers them all."""

from __future__ import annotations

from vis_tui.widgets.blocks import code, media, progress, table, terminal, text
from vis_tui.widgets.blocks.registry import BlockContext, render_block, renderer_for, renders

__all__ = [
    "BlockContext",
    "code",
    "media",
    "progress",
    "render_block",
    "renderer_for",
    "renders",
    "table",
    "terminal",
    "text",
]
