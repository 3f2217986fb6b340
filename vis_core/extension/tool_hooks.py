"""Op hooks at the built-in tools: ``fs_access`` checks, guarded patches and shell commands."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from vis_core.extension.declarations import OpHookPhase
from vis_core.extension.hooks import (
    OperationBlocked,
    OpHooks,
    diff_hunks,
    preview_spans,
    text_lines,
)

PatchGuard = Callable[[str, str, str, list[str], Any, bool], tuple[Any, tuple[str, ...]]]


def plain_result(value: Any) -> Any:
    """A tool result as plain data for after hooks."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


class ToolHooks:
    """What the built-in tools consult: the session's op hooks (``ToolContext.hooks``)."""

    def __init__(self, hooks: OpHooks) -> None:
        self.hooks = hooks

    def check_access(self, operation: str, path: str | os.PathLike[str]) -> None:
        """``fs_access``: raise ``PermissionError`` when an extension refuses ``path``."""
        self.hooks.check_access(operation, os.fspath(path))

    def _guard(self, args: list[Any]) -> PatchGuard:
        def guard(
            path: str, before: str, after: str, lines: list[str], applied: Any, created: bool
        ) -> tuple[Any, tuple[str, ...]]:
            from vis_core.tools.patching import Applied, PatchError
            from vis_core.tools.textfiles import read_text

            preview = {"path": path, "before": before, "after": after,
                       "spans": preview_spans(applied.hunks)}
            verdict = self.hooks.before("patch", args, preview)
            # hooks take time: the file must still be what the preview was made from
            target = Path(path)
            if created:
                changed = target.exists()
            else:
                changed = not target.exists() or read_text(target, path, tool="patch") != before
            if changed:
                raise PatchError(
                    f"patch: {path} changed while the op hooks checked this patch; nothing was "
                    "written. Read it again and patch the new version"
                )
            final = verdict.preview["after"] if verdict.preview else after
            if final == after:
                return applied, verdict.notes
            new_lines = text_lines(final)
            return Applied(new_lines, diff_hunks(lines, new_lines)), verdict.notes

        return guard

    async def patch(
        self, call: dict[str, Any], run: Callable[[PatchGuard | None], Awaitable[Any]]
    ) -> Any:
        """Run a patch with its guards (they see the preview) and observers."""
        args = [call]
        guard = self._guard(args) if self.hooks.has("patch", OpHookPhase.BEFORE) else None
        try:
            result = await run(guard)
        except OperationBlocked:
            await self.hooks.run_after("patch", args, None)
            raise
        except Exception as exc:
            await self.hooks.run_after("patch", args, {"error": f"{type(exc).__name__}: {exc}"})
            raise
        await self.hooks.run_after("patch", args, plain_result(result))
        return result

    async def shell(self, call: dict[str, Any], run: Callable[[], Awaitable[Any]]) -> Any:
        """Start a shell command after its guards; observers get the started command."""
        args = [call]
        try:
            await self.hooks.run_before("shell", args)
        except OperationBlocked:
            await self.hooks.run_after("shell", args, None)
            raise
        handle = await run()
        await self.hooks.run_after(
            "shell", args,
            {"id": getattr(handle, "id", None), "command": call.get("command"),
             "pid": getattr(handle, "pid", None)},
        )
        return handle
