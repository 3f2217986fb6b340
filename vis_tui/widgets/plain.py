"""Plain-text forms of Activities, for copying to the clipboard."""

from __future__ import annotations

from typing import Any

from vis_core.model.activity import (
    ActivityCode,
    ActivityDiff,
    ActivityHeading,
    ActivityMarkdown,
    ActivityPresentation,
    ActivityProgress,
    ActivityRecord,
    ActivityTable,
    ActivityTerminal,
    ActivityText,
)
from vis_core.model.block import plain_error


def block_text(block: Any) -> str:
    """One block as plain text."""
    match block:
        case ActivityText(text=text) | ActivityHeading(text=text):
            return text
        case ActivityMarkdown(markdown=markdown):
            return markdown
        case ActivityCode(code=code):
            return code
        case ActivityDiff(diff=diff):
            return diff
        case ActivityTable(headers=headers, rows=rows):
            return "\n".join("\t".join(row) for row in (headers, *rows))
        case ActivityProgress(completed=done, total=total, label=label):
            return f"{label} {done}/{total if total is not None else '?'}".strip()
        case ActivityTerminal(lines=lines, exit=code):
            text = "\n".join(["$ " + block.command_as_run(), *(line.text for line in lines)])
            return text if code is None else f"{text}\nexit {code}"
    return f"[{type(block).__name__.removeprefix('Activity').lower()}] {block.attachment}"


def presentation_text(presentation: ActivityPresentation) -> str:
    lines = [
        f"{presentation.headline} {presentation.summary or presentation.outcome or ''}".strip()
    ]
    lines.extend(block_text(block) for block in presentation.content)
    for section in presentation.sections:
        lines.append(f"## {section.headline} {section.summary}".rstrip())
        lines.extend(block_text(block) for block in section.content)
    return "\n".join(lines)


def record_text(record: ActivityRecord) -> str:
    """An Activity as plain text: its presentation, else its tool name, and any error."""
    text = presentation_text(record.presentation) if record.presentation else record.tool
    if not record.error:
        return text
    return f"{text}\nerror: {plain_error(record.error)}"
