"""Progress blocks as a text bar (stable in snapshots, readable everywhere)."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from vis_core.model.activity import ActivityProgress
from vis_tui.widgets.blocks.registry import BlockContext, renders

BAR_WIDTH = 24


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def progress_content(block: ActivityProgress) -> Content:
    label = f"{block.label} " if block.label else ""
    if block.total is None or block.total <= 0:
        return Content.assemble(label, ("working… ", "$text-muted"), _number(block.completed))
    ratio = max(0.0, min(1.0, block.completed / block.total))
    filled = round(ratio * BAR_WIDTH)
    return Content.assemble(
        label,
        ("━" * filled, "$success"),
        ("━" * (BAR_WIDTH - filled), "$text-muted 40%"),
        f" {ratio:.0%} ({_number(block.completed)}/{_number(block.total)})",
    )


@renders(ActivityProgress)
def progress_block(block: ActivityProgress, context: BlockContext) -> Widget:
    return Static(progress_content(block), classes="progress-block")
