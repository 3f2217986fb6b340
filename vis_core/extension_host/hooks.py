"""Running op hooks: guards and observers of the loaded extensions, diffs and verdicts."""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.extension.context import CallContext, calling, current_call
from vis_core.extension.declarations import OpHook, OpHookPhase
from vis_core.extension.hooks import (
    Block,
    InvalidRepair,
    OperationBlocked,
    Repair,
)
from vis_core.extension.logs import write_log
from vis_core.ipc.kinds import TargetKind
from vis_core.system.loops import run_on_loop

if TYPE_CHECKING:
    from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
    from vis_core.extension_host.session_workers import SessionWorkers

log = logging.getLogger(__name__)
T = TypeVar("T")

FS_ACCESS = "fs_access"
REPAIRABLE = ("patch",)


def preview_spans(hunks: Sequence[tuple[int, list[str], list[str]]]) -> list[list[int]]:
    """Spans ``[start, end]`` (inclusive, one-based) of the edits in the proposed result."""
    spans, delta = [], 0
    for lo, old, new in hunks:
        start = lo + delta + 1
        spans.append([start, start + len(new) - 1])
        delta += len(new) - len(old)
    return spans


def text_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only, each keeping its ending (as the file tools number them)."""
    if not text:
        return []
    parts = text.split("\n")
    last = parts.pop()
    return [part + "\n" for part in parts] + ([last] if last else [])


def diff_hunks(old: list[str], new: list[str]) -> list[tuple[int, list[str], list[str]]]:
    """Hunks ``(old start, old lines, new lines)`` between two line lists."""
    import difflib  # only when a hook changed what a tool writes

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [
        (i1, old[i1:i2], new[j1:j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


@dataclass(frozen=True)
class Verdict:
    """What the before hooks decided: the (possibly repaired) preview and correction notes."""

    preview: dict[str, Any] | None
    notes: tuple[str, ...] = ()


# -- running hooks --------------------------------------------------------------------------


class OpHooks:
    """Runs the op hooks of the loaded extensions for one session, in load order."""

    def __init__(
        self,
        extensions: Callable[[], LoadedExtensions | None],
        context_for: Callable[[str], CallContext],
        worker: SessionWorkers,
        tell: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self._extensions = extensions
        self._context_for = context_for
        self._worker = worker  # where every hook runs (the host runs no extension code)
        self._tell = tell  # a warning the person sees in the session
        self._told: set[tuple[str, int]] = set()  # hooks whose wrong return value was told

    def hooks(self, op: str, phase: OpHookPhase | None) -> list[tuple[LoadedExtension, OpHook]]:
        loaded = self._extensions()
        if loaded is None:
            return []
        return [
            (ext, hook)
            for ext in loaded.enabled
            if ext.declaration is not None
            for hook in ext.declaration.op_hooks
            if op in hook.ops and (phase is None or hook.phase is phase)
        ]

    def has(self, op: str, phase: OpHookPhase | None = None) -> bool:
        return bool(self.hooks(op, phase))

    async def _call(self, ext: LoadedExtension, hook: OpHook, payload: dict[str, Any]) -> Any:
        """Run ``hook`` of ``ext`` in the session's extension worker, awaited on the loop:
        the host runs no extension code, and an async hook is awaited on the worker's loop."""
        running = current_call()  # read before the hook's own context replaces the call's
        waiting = () if running is None else running.callers
        assert ext.declaration is not None  # (:meth:`hooks` lists the declared ones only)
        index = ext.declaration.op_hooks.index(hook)
        args = (index, payload, ext.name in waiting)
        limit = self._worker.times.hook_timeout
        await self._worker.ready_for(ext.name)  # the limit is the hook's, not its worker's start
        with calling(self._context_for(ext.name)):
            call = self._worker.call_in(TargetKind.HOOK, ext.name, str(index), args)
            try:
                return await asyncio.wait_for(call, limit)
            except TimeoutError:  # cancelled in the worker, which is killed if it ignores that
                op = payload.get("op", FS_ACCESS)  # logged as a failed hook (see _failed)
                raise TimeoutError(
                    f"its {op} hook did not answer within {limit:g} s; it was cancelled"
                ) from None

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        """The synchronous face, for a thread (a file tool's, a draft's): the session's loop
        runs ``coro`` while this thread waits."""
        return run_on_loop(self._worker.loop, coro)

    def _failed(self, ext: LoadedExtension, op: str, phase: str) -> None:
        log.debug("%s hook of extension %r for %s failed", phase, ext.name, op, exc_info=True)
        write_log(
            "error",
            f"{phase} hook for {op} failed; the operation went on",
            source=ext.name,
            detail=traceback.format_exc(),
        )

    def before(self, op: str, args: list[Any], preview: dict[str, Any] | None = None) -> Verdict:
        """:meth:`run_before` from a thread."""
        if not self.has(op, OpHookPhase.BEFORE):
            return Verdict(None if preview is None else dict(preview))
        return self._wait(self.run_before(op, args, preview))

    async def run_before(
        self, op: str, args: list[Any], preview: dict[str, Any] | None = None
    ) -> Verdict:
        """Run the guards; raise :class:`OperationBlocked` on a refusal or an invalid repair."""
        current = None if preview is None else dict(preview)
        notes: list[str] = []
        for ext, hook in self.hooks(op, OpHookPhase.BEFORE):
            payload: dict[str, Any] = {"op": op, "args": list(args)}
            if current is not None:
                payload["preview"] = dict(current)
            try:
                verdict = await self._call(ext, hook, payload)
            except InvalidRepair as exc:
                raise OperationBlocked(op, ext.name, f"its repair is invalid ({exc})") from None
            except Exception:
                self._failed(ext, op, "before")
                continue
            if verdict is None:
                continue
            if isinstance(verdict, Block):
                raise OperationBlocked(op, ext.name, verdict.reason, verdict.hint)
            if isinstance(verdict, Repair):
                if op not in REPAIRABLE:
                    itself = " (Vis repairs python_execution blocks itself)"
                    raise OperationBlocked(
                        op,
                        ext.name,
                        "its before hook returned vis.repair, but only patch accepts repairs"
                        + (itself if op == "python_execution" else ""),
                    )
                if current is None:
                    raise OperationBlocked(op, ext.name, "it repaired a patch that has no preview")
                before_lines = text_lines(current["before"])
                after_lines = text_lines(verdict.source)
                current = {
                    **current,
                    "after": verdict.source,
                    "spans": preview_spans(diff_hunks(before_lines, after_lines)),
                }
                notes.extend(verdict.notes)
                continue
            await self._ignored(ext, hook, op, verdict)
        return Verdict(current, tuple(notes))

    async def _ignored(self, ext: LoadedExtension, hook: OpHook, op: str, verdict: Any) -> None:
        """A before hook returned something other than a verdict: the operation goes on, as
        for a hook that failed; it is logged, and the person is told once per hook (one who
        returns ``False`` would otherwise believe it refused)."""
        log.error(
            "before hook of extension %r for %s returned %s; return None, vis.block(...) "
            "or vis.repair(...); it is ignored",
            ext.name,
            op,
            type(verdict).__name__,
        )
        assert ext.declaration is not None  # it ran
        key = (ext.name, ext.declaration.op_hooks.index(hook))
        if self._tell is None or key in self._told:
            return
        self._told.add(key)
        got = repr(verdict) if isinstance(verdict, bool) else f"a {type(verdict).__name__}"
        repair = ", or vis.repair(source, notes=[...]) to correct it" if op in REPAIRABLE else ""
        await self._tell(
            f"Extension {ext.name!r}: its before hook for {op} returned {got}, which is not a "
            f"verdict, so the {op} went on. Return None to let it go on or "
            f"vis.block(reason) to refuse it{repair}."
        )

    def after(self, op: str, args: list[Any], result: Any) -> None:
        """:meth:`run_after` from a thread."""
        if self.has(op, OpHookPhase.AFTER):
            self._wait(self.run_after(op, args, result))

    async def run_after(self, op: str, args: list[Any], result: Any) -> None:
        """Run the observers; their errors are logged and their return values ignored."""
        for ext, hook in self.hooks(op, OpHookPhase.AFTER):
            try:
                await self._call(ext, hook, {"op": op, "args": list(args), "result": result})
            except Exception:
                self._failed(ext, op, "after")

    def check_access(self, operation: str, path: str) -> None:
        """Run ``fs_access`` checks (from a file tool's thread); an error (or a block) refuses
        with ``PermissionError``."""
        for ext, hook in self.hooks(FS_ACCESS, None):
            try:
                verdict = self._wait(self._call(ext, hook, {"operation": operation, "path": path}))
            except Exception as exc:
                raise PermissionError(
                    f"{operation} of {path} was refused by extension {ext.name!r}: "
                    f"{str(exc) or type(exc).__name__}"
                ) from None
            if isinstance(verdict, Block):
                raise PermissionError(
                    f"{operation} of {path} was refused by extension {ext.name!r}: "
                    f"{verdict.reason}" + (f". Hint: {verdict.hint}" if verdict.hint else "")
                )
