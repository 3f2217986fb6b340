"""Image blocks as pictures (or a labelled placeholder); video, audio and file blocks as chips."""

from __future__ import annotations

from textual.widget import Widget

from vis_core.model.activity import ActivityAudio, ActivityFile, ActivityImage, ActivityVideo
from vis_tui.widgets.blocks.image import ImageBlock
from vis_tui.widgets.blocks.registry import BlockContext, renders
from vis_tui.widgets.paths import PathChip

_LABELS: dict[type, str] = {
    ActivityVideo: "video",
    ActivityAudio: "audio",
    ActivityFile: "file",
}


@renders(ActivityImage)
def image_block(block: ActivityImage, context: BlockContext) -> Widget:
    return ImageBlock(block, context)


@renders(ActivityVideo, ActivityAudio, ActivityFile)
def media_block(block: ActivityVideo, context: BlockContext) -> Widget:
    kind = _LABELS[type(block)]
    caption = f" — {block.caption}" if block.caption else ""
    chip = PathChip(block.attachment, f"[{kind}] {block.attachment}{caption}")
    chip.add_class("media-chip", f"media-{kind}")
    return chip
