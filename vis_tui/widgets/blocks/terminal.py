"""Terminal blocks: each stage on its own line, stderr in the error colour, omissions noted."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from vis_core.model.activity import ActivityTerminal, ActivityTerminalLine
from vis_tui.widgets.blocks.registry import BlockContext, renders

TAIL_LINES = 3


def _line(line: ActivityTerminalLine) -> Content:
    style = "$text-error" if line.stream == "stderr" else ""
    return Content.styled(line.text, style)


def terminal_content(block: ActivityTerminal) -> Content:
    parts: list[Content] = []
    for index, stage in enumerate(block.command):
        prompt = "$ " if index == 0 else "  "
        parts.append(Content.assemble((prompt, "$text-muted"), (stage, "bold")))
    if block.omitted_lines:
        noun = "line" if block.omitted_lines == 1 else "lines"
        parts.append(
            Content.styled(f"… {block.omitted_lines} earlier {noun} omitted", "$text-muted italic")
        )
    parts.extend(_line(line) for line in block.lines)
    if block.exit is not None:
        style = "$text-success" if block.exit == 0 else "$text-error"
        parts.append(Content.styled(f"exit {block.exit}", style))
    return Content("\n").join(parts)


def terminal_tail(block: ActivityTerminal, count: int = TAIL_LINES) -> Content:
    """The last ``count`` output lines: what a running step shows while collapsed."""
    return Content("\n").join([_line(line) for line in block.lines[-count:]])


@renders(ActivityTerminal)
def terminal_block(block: ActivityTerminal, context: BlockContext) -> Widget:
    return Static(terminal_content(block), classes="terminal-block")
