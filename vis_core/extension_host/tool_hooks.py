"""Op hooks at the built-in tools: ``fs_access`` checks, guarded patches and shell commands."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from vis_core.extension.declarations import OpHookPhase
from vis_core.extension.hooks import OperationBlocked
from vis_core.extension_host.hooks import OpHooks, diff_hunks, preview_spans, text_lines
from vis_core.system.loops import end_tasks, keep

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
        self._observers: set[asyncio.Task[None]] = set()  # shell after hooks waiting on exits

    def check_access(self, operation: str, path: str | os.PathLike[str]) -> None:
        """``fs_access``: raise ``PermissionError`` when an extension refuses ``path``."""
        self.hooks.check_access(operation, os.fspath(path))

    def _guard(self, args: list[Any], called: list[bool]) -> PatchGuard:
        def guard(
            path: str, before: str, after: str, lines: list[str], applied: Any, created: bool
        ) -> tuple[Any, tuple[str, ...]]:
            from vis_core.tools.patching import Applied, PatchError
            from vis_core.tools.textfiles import read_text

            called.append(True)
            preview = {
                "path": path,
                "before": before,
                "after": after,
                "spans": preview_spans(applied.hunks),
            }
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
        called: list[bool] = []
        guarded = self.hooks.has("patch", OpHookPhase.BEFORE)
        guard = self._guard(args, called) if guarded else None
        try:
            result = await run(guard)
        except OperationBlocked:
            await self.hooks.run_after("patch", args, None)
            raise
        except Exception as exc:
            if guarded and not called:  # refused before any preview: guards still see the call
                try:
                    await self.hooks.run_before("patch", args)
                except OperationBlocked:
                    pass  # the patch is refused already, with its own reason
            await self.hooks.run_after("patch", args, {"error": f"{type(exc).__name__}: {exc}"})
            raise
        await self.hooks.run_after("patch", args, plain_result(result))
        return result

    async def shell(self, call: dict[str, Any], run: Callable[[], Awaitable[Any]]) -> Any:
        """Start a shell command after its guards; observers run when the command ends.

        ``shell`` returns its handle at once, while the command's effects happen until it
        exits, so the after hooks get ``{id, command, pid, exit_code, timed_out, stopped,
        output}`` (``output`` is the tail ``wait()`` shows) once the process has ended: also
        when it was stopped or timed out, not when Vis itself exits first. A refused command
        gives ``result=None``; one that could not start gives ``{command, error}``.
        """
        args = [call]
        try:
            await self.hooks.run_before("shell", args)
        except OperationBlocked:
            await self.hooks.run_after("shell", args, None)
            raise
        try:
            handle = await run()
        except Exception as exc:
            await self.hooks.run_after(
                "shell",
                args,
                {"command": call.get("command"), "error": f"{type(exc).__name__}: {exc}"},
            )
            raise
        if self.hooks.has("shell", OpHookPhase.AFTER):
            keep(self._observers, asyncio.ensure_future(self._after_exit(args, handle)))
        return handle

    async def _after_exit(self, args: list[Any], handle: Any) -> None:
        status = await handle.wait(None)
        await self.hooks.run_after(
            "shell",
            args,
            {
                "id": handle.id,
                "command": handle.command,
                "pid": handle.pid,
                "exit_code": status.exit_code,
                "timed_out": status.timed_out,
                "stopped": status.stopped,
                "output": status.output,
            },
        )

    async def drain(self, timeout: float = 10.0) -> None:
        """Let the after hooks of ended commands finish (the session is closing)."""
        pending = list(self._observers)
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=timeout)
        await end_tasks(late)
