"""Code (syntax highlighted) and diff (coloured, with line numbers) blocks."""

from __future__ import annotations

import re

from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from vis_core.frontend import shorten_path
from vis_core.model.activity import ActivityCode, ActivityDiff
from vis_tui.widgets.blocks.registry import BlockContext, renders
from vis_tui.widgets.paths import PathChip

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _with_path(body: Widget, path: str | None, context: BlockContext, classes: str) -> Widget:
    if not path:
        body.add_class(classes)
        return body
    label = path if context.workspace is None else shorten_path(path, context.workspace)
    return Vertical(PathChip(path, label), body, classes=f"{classes} with-path")


@renders(ActivityCode)
def code_block(block: ActivityCode, context: BlockContext) -> Widget:
    from rich.syntax import Syntax  # Pygments loads with the first code block

    syntax = Syntax(
        block.code.rstrip("\n"),
        block.language or "text",
        theme="monokai",
        line_numbers=True,
        word_wrap=True,
        background_color="default",
    )
    return _with_path(Static(syntax, classes="code-body"), block.path, context, "code-block")


def diff_content(diff: str) -> Content:
    """A unified diff with old/new line numbers in a gutter and +/- lines coloured."""
    old = new = 0
    parts: list[Content] = []
    for line in diff.rstrip("\n").split("\n"):
        match = _HUNK.match(line)
        if match:
            old, new = int(match.group(1)), int(match.group(2))
            parts.append(Content.styled(f"{'':>9} {line}", "$text-muted"))
        elif line.startswith(("---", "+++", "diff ", "index ")):
            parts.append(Content.styled(f"{'':>9} {line}", "bold"))
        elif line.startswith("+"):
            parts.append(Content.styled(f"{'':>4} {new:>4} {line}", "$text-success"))
            new += 1
        elif line.startswith("-"):
            parts.append(Content.styled(f"{old:>4} {'':>4} {line}", "$text-error"))
            old += 1
        elif line.startswith("\\"):
            parts.append(Content.styled(f"{'':>9} {line}", "$text-muted"))
        else:
            parts.append(Content(f"{old:>4} {new:>4} {line}"))
            old += 1
            new += 1
    return Content("\n").join(parts)


@renders(ActivityDiff)
def diff_block(block: ActivityDiff, context: BlockContext) -> Widget:
    return _with_path(
        Static(diff_content(block.diff), classes="diff-body"), block.path, context, "diff-block"
    )
