"""What the transcript knows of one ``python_execution`` block, live and after resume alike."""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vis_core.model.activity import ActivityRecord
from vis_core.model.block import FileChange, error_line, plain_error
from vis_core.model.turn import BLOCK_CANCELLED

if TYPE_CHECKING:  # the core's events load after the first frame
    from vis_core.events import BlockFinished

_SAVED = re.compile(r"Full output saved to: (.+?)(?: \(its first part[^)]*\))?\]")


@dataclass(frozen=True)
class BlockInfo:
    """A block's code and, once it ended, what it printed (as the model read it), its error,
    duration and the files it changed."""

    iteration_id: str
    code: str
    ended: bool = False
    stdout: str = ""
    error: str | None = None
    duration: float = 0.0
    files: tuple[FileChange, ...] = ()

    def finished(self, event: BlockFinished) -> BlockInfo:
        return dataclasses.replace(
            self,
            ended=True,
            stdout=event.stdout,
            error=event.error,
            duration=event.duration,
            files=tuple(event.files),
        )

    @classmethod
    def stored(cls, value: dict[str, Any]) -> BlockInfo:
        """From a ``code`` entry of ``Store.turn_story``."""
        import orjson

        from vis_core.events import BlockFinished, event_from_dict

        data = value["ended"]
        event = event_from_dict(orjson.loads(data) if isinstance(data, str | bytes) else data)
        assert isinstance(event, BlockFinished)
        return cls(str(value["iteration_id"]), str(value["code"])).finished(event)

    @property
    def cancelled(self) -> bool:
        return (self.error or "").strip() == BLOCK_CANCELLED

    @property
    def saved_output(self) -> str | None:
        """Where the whole output went when the model's copy was cut."""
        match = _SAVED.search(self.stdout[:2000])
        return match.group(1) if match else None


def folds_into_activity(info: BlockInfo, records: Iterable[ActivityRecord]) -> bool:
    """Whether the block's row may stay hidden behind the one Activity it made: its code is
    one statement, it made exactly one call of its own, printed nothing, changed no file,
    and had no error that call did not show already. Else the row shows what the call's
    row cannot: the rest of the code, what it printed, the files. A call refused for its
    arguments (a ``TypeError``: an unknown keyword, one missing) keeps the row: the code
    that made it is what the person checks."""
    calls = [r for r in records if r.iteration_id == info.iteration_id and r.parent_id is None]
    rows = {r.group_key or r.id for r in calls}  # calls on one handle share a row
    if len(rows) != 1 or info.files or info.stdout.strip() or _more_than_the_call(info.code):
        return False
    if any((r.error or "").startswith("TypeError:") for r in calls):
        return False
    if info.error is None or info.cancelled:
        return True
    # the line each row says of its error, the class names in front aside
    return plain_error(error_line(info.error)) == plain_error(error_line(calls[0].error or ""))


@functools.lru_cache(maxsize=256)
def _more_than_the_call(code: str) -> bool:
    """Whether ``code`` holds more than one statement (a block's top-level ``await`` allowed;
    code not known yet, as a row drawn from its calls alone, holds none)."""
    try:
        tree = compile(code, "<block>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except (SyntaxError, ValueError):
        return True
    return not isinstance(tree, ast.Module) or len(tree.body) > 1
