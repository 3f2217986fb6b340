"""What a block renderer may need beyond the block (light: the first frame builds one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BlockContext:
    """What a block renderer may need beyond the block: the workspace for short paths,
    ``attachments`` (a name or id to its stored file in the shown session, or None), and
    ``show_steps`` (the ``summarize_steps`` setting: end each turn with its step counts)."""

    workspace: Path | None = None
    attachments: Callable[[str], Path | None] | None = None
    show_steps: Callable[[], bool] = lambda: True
