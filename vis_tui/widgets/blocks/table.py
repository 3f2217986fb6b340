"""Table blocks; a row with a path opens that file when its first cell is pressed."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from vis_core.frontend import shorten_path, shorten_paths_in
from vis_core.model.activity import ActivityTable
from vis_tui.widgets.blocks.registry import BlockContext, renders
from vis_tui.widgets.paths import PathChip, click_style


@renders(ActivityTable)
def table_block(block: ActivityTable, context: BlockContext) -> Widget:
    table = Table(box=box.SIMPLE_HEAD, expand=False, show_edge=False, pad_edge=False)
    for header in block.headers:
        table.add_column(Text(header), overflow="fold")  # text: Rich reads a str as markup
    paths = block.paths or ("",) * len(block.rows)
    for row, path in zip(block.rows, paths, strict=True):
        cells = [
            Text(cell if context.workspace is None else shorten_paths_in(cell, context.workspace))
            for cell in row
        ]
        if path and cells:
            cells[0].stylize(click_style(path))
        table.add_row(*cells)
    body = Static(table, classes="table-body")
    chips = [
        PathChip(p, p if context.workspace is None else shorten_path(p, context.workspace))
        for p in dict.fromkeys(p for p in paths if p)
    ]
    if not chips:
        body.add_class("table-block")
        return body
    row = Horizontal(Static("open:", classes="chips-label"), *chips, classes="path-chips")
    return Vertical(body, row, classes="table-block with-path")
