"""Maps each Activity block type to the widget that renders it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from textual.widget import Widget
from textual.widgets import Static

from vis_tui.block_context import BlockContext

BlockRenderer = Callable[[Any, BlockContext], Widget]
_RENDERERS: dict[type, BlockRenderer] = {}
R = TypeVar("R", bound=BlockRenderer)


def renders(*block_types: type) -> Callable[[R], R]:
    """Register the decorated function as the renderer of ``block_types``."""

    def register(function: R) -> R:
        for block_type in block_types:
            _RENDERERS[block_type] = function
        return function

    return register


def renderer_for(block_type: type) -> BlockRenderer | None:
    for klass in block_type.__mro__:
        if klass in _RENDERERS:
            return _RENDERERS[klass]
    return None


def render_block(block: Any, context: BlockContext) -> Widget:
    """The widget for one block; an unknown type shows its name rather than failing."""
    renderer = renderer_for(type(block))
    if renderer is None:
        return Static(f"({type(block).__name__} has no renderer in this Vis)", markup=False)
    widget = renderer(block, context)
    widget.add_class("block")
    return widget
