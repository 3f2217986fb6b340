"""The op hooks of a draft operation: ``draft/create|sync|approve|discard``, ``git/commit``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class DraftOp(StrEnum):
    CREATE = "draft/create"
    SYNC = "draft/sync"
    APPROVE = "draft/approve"
    DISCARD = "draft/discard"
    GIT_COMMIT = "git/commit"


Before = Callable[[str, list[Any]], object]  # raises (OperationBlocked) to refuse
After = Callable[[str, list[Any], Any], object]


@dataclass(frozen=True)
class DraftHooks:
    """The session's op hooks, called synchronously (drafts run in a thread)."""

    before: Before
    after: After

    def around(self, op: DraftOp, args: dict[str, Any], run: Callable[[], Any]) -> Any:
        """``run()`` between the before hooks (which may refuse) and the after hooks."""
        self.before(str(op), [args])
        result = run()
        self.after(str(op), [args], result)
        return result


def _nothing(*_args: Any) -> None:
    return None


NO_HOOKS = DraftHooks(_nothing, _nothing)
