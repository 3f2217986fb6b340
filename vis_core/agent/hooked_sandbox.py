"""``python_execution`` with op hooks, a fresh ``session`` dict, any wait before every block
and any note its error needs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from vis_core.extension.hooks import OperationBlocked
from vis_core.extension_host.hooks import OpHooks
from vis_core.model.block import PYTHON_EXECUTION

if TYPE_CHECKING:
    from vis_core.sandbox.host import BlockResult

log = logging.getLogger(__name__)


@dataclasses.dataclass(eq=False)
class HookedSandbox:
    """Wraps a :class:`~vis_core.sandbox.Sandbox`: guards, observers and the ``session`` global;
    ``wait(code)`` first holds a block until what it names is ready (its MCP servers), and
    ``explain(error)`` gives a note its error needs (why the MCP tools it names are missing).
    ``ahead``: starts, in the background, what building ``session`` needs (the extension
    workers of its ``ctx``) when a block is being written; ``named(code)``: what the block's
    code names (the workers of the extensions it calls), once it came.
    """

    inner: Any
    hooks: OpHooks
    session: Callable[[], Awaitable[dict[str, Any]]] | None = None
    wait: Callable[[str], Awaitable[None]] | None = None
    ahead: Callable[[], None] | None = None
    named: Callable[[str], None] | None = None
    explain: Callable[[str], str | None] | None = None

    async def run(self, code: str) -> BlockResult:
        if self.named is not None:
            self.named(code)
        if self.wait is not None:
            await self.wait(code)
        args = [{"code": code}]
        try:
            await self.hooks.run_before(PYTHON_EXECUTION, args)
        except OperationBlocked as exc:
            from vis_core.sandbox.host import BlockResult

            await self.hooks.run_after(PYTHON_EXECUTION, args, None)
            return BlockResult("", f"{type(exc).__name__}: {exc}", None, 0.0)
        # the session dict is built (its extension worker started) while the sandbox child
        # starts: the child awaits it just before the block is sent
        building = None if self.session is None else asyncio.ensure_future(self._globals())
        try:
            result = await self.inner.run(code, globals=building)
        finally:
            if building is not None and not building.done():  # the block did not start
                building.cancel()
        if self.explain is not None and result.error:
            note = self.explain(result.error)
            if note:
                result = dataclasses.replace(result, error=f"{result.error.rstrip()}\n{note}")
        await self.hooks.run_after(
            PYTHON_EXECUTION,
            args,
            {
                "stdout": result.stdout,
                "forms": [dict(form) for form in result.forms],
                "error": result.error,
                "restarted": result.restarted,
                "duration": result.duration,
            },
        )
        return result

    def prepare(self) -> None:
        """The model has begun writing a block: its sandbox child and the extension workers
        of its session dict start now, while its code streams, not once it has arrived."""
        if self.ahead is not None:
            self.ahead()
        self.inner.prepare()  # its task is the sandbox's own (closed with it)

    async def _globals(self) -> dict[str, Any] | None:
        """The block's ``session`` global; None when building it failed (logged)."""
        assert self.session is not None
        try:
            session = await self.session()
        except Exception:  # the context never stops a block
            log.exception("building the session dict failed; the block runs without it")
            return None
        return {"session": session} if session else None

    async def interrupt(self) -> None:
        await self.inner.interrupt()

    def printed(self, lines: int) -> str:
        return self.inner.printed(lines)

    def printed_since(self, mark: int, most: int) -> tuple[str, int]:
        return self.inner.printed_since(mark, most)

    async def close(self) -> None:
        await self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
