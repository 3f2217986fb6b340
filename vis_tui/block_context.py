"""What a block renderer may need beyond the block (light: the first frame builds one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AnswerPacing:
    """How a streamed answer is re-rendered: at most every ``flush_seconds``, then a pause of
    ``pace`` times what the last re-render took; at most ``slice`` characters added per
    re-render (cut at a blank line: a frame never parses a whole backlog; a longer block with
    no blank line goes out whole)."""

    flush_seconds: float = 0.05
    pace: float = 3
    slice: int = 65_536


DEFAULT_PACING = AnswerPacing()


@dataclass(frozen=True)
class BlockContext:
    """What a block renderer may need beyond the block: the workspace for short paths,
    ``attachments`` (a name or id to its stored file in the shown session, or None),
    ``show_steps`` (the ``summarize_steps`` setting: end each turn with its step counts),
    ``printed`` (the last N lines the shown session's running block printed so far) and how
    streamed answers are paced."""

    workspace: Path | None = None
    attachments: Callable[[str], Path | None] | None = None
    show_steps: Callable[[], bool] = lambda: True
    printed: Callable[[int], str] | None = None
    answer_pacing: AnswerPacing = DEFAULT_PACING
