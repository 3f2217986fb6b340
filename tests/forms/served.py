"""An extension call's SDK face as its worker has it, for tests of the host side: each call
goes to the host, which serves it on its loop in the call's context (as it serves a worker's
frame), while the extension code waits in its thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from vis_core.extension.context import CallContext, calling
from vis_core.extension.runtime import Runtime
from vis_core.extension_host.worker_sdk import WorkerRuntime, run_service, served_on_loop
from vis_core.ipc.kinds import TargetKind


class _ToHost:
    """A worker's channel reduced to its meaning: the frame is served on the host's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, host_call: CallContext) -> None:
        self._loop = loop
        self._host_call = host_call

    def call(self, target: TargetKind, name: str, args: tuple, kwargs: dict) -> Any:
        assert target is TargetKind.SDK
        runtime = self._host_call.runtime
        assert isinstance(runtime, Runtime)

        async def served() -> Any:  # as the host's channel serves it: on its loop, or a thread
            with calling(self._host_call):
                coroutine = served_on_loop(runtime, name)
                if coroutine is not None:
                    return await coroutine(*args, **kwargs)
                return await asyncio.to_thread(run_service, runtime, name, args, kwargs)

        return asyncio.run_coroutine_threadsafe(served(), self._loop).result()


async def in_worker(host_call: CallContext, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` as extension code in its worker runs, in a thread, its SDK calls served by
    the host for ``host_call`` (the host's call the worker's tool serves)."""
    to_host = _ToHost(asyncio.get_running_loop(), host_call)
    in_its_worker = CallContext(
        host_call.session_id,
        host_call.workspace_root,
        host_call.project_root,
        owner=host_call.owner,
        runtime=WorkerRuntime(to_host),
    )

    def run() -> Any:
        with calling(in_its_worker):
            return fn()

    return await asyncio.to_thread(run)
