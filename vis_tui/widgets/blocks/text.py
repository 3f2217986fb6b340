"""Text, heading and Markdown blocks."""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Static

from vis_core.frontend import shorten_paths_in
from vis_core.model.activity import ActivityHeading, ActivityMarkdown, ActivityText
from vis_tui.widgets.blocks.registry import BlockContext, renders


def _short(text: str, context: BlockContext) -> str:
    return text if context.workspace is None else shorten_paths_in(text, context.workspace)


@renders(ActivityText)
def text_block(block: ActivityText, context: BlockContext) -> Widget:
    return Static(_short(block.text, context), markup=False, classes="text-block")


@renders(ActivityHeading)
def heading_block(block: ActivityHeading, context: BlockContext) -> Widget:
    return Static(_short(block.text, context), markup=False, classes="heading-block")


@renders(ActivityMarkdown)
def markdown_block(block: ActivityMarkdown, context: BlockContext) -> Widget:
    from textual.widgets import Markdown  # markdown-it loads with the first Markdown block

    from vis_tui.widgets.answer_markdown import ShownLinksParser

    return Markdown(block.markdown, classes="markdown-block", parser_factory=ShownLinksParser)
