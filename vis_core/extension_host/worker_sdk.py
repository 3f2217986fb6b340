"""The SDK runtime of an extension worker: each operation is a frame to the host, which runs
it in its own runtime inside the context of the tool call it was made from (or of no call, for
a thread or a load). Everything else of the SDK (declarations, records, roots, ``vis.fs``,
``vis.shell``, ``vis.file_mutation_queue``, whose ``flock`` every Vis process honours) runs in
the worker itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from vis_core.extension.acting import loading_extension
from vis_core.extension.context import current_call
from vis_core.extension.runtime import OPERATIONS, OUTSIDE, Runtime, passes_on
from vis_core.ipc.kinds import TargetKind

RUNTIME = "runtime:"  # an SDK frame naming a runtime operation: ``runtime:state_read``
SETTING_VALUE = RUNTIME + "setting_value"  # also read by a thread of an extension (no call)


def _to_host(runtime: WorkerRuntime, name: str) -> Callable[..., Any]:
    call, operation = runtime._caller.call, RUNTIME + name
    return lambda *args, **kwargs: call(TargetKind.SDK, operation, args, kwargs)


@passes_on(_to_host)
class WorkerRuntime(Runtime):
    """The SDK runtime of an extension worker: every operation runs in the host, in the
    context of the tool call it is made from (or of no call, for a thread or a load), but
    ``run_git`` and ``save_output``, which run in the worker, and ``setting_value`` while the
    extension loads (its declared default)."""

    def __init__(self, caller: Any) -> None:
        super().__init__()
        self._caller = caller

    run_git = Runtime.run_git  # jailed by the host's terms
    save_output = Runtime.save_output  # written by the worker itself

    def setting_value(self, setting_id: str, default: Any) -> Any:
        if current_call() is None and loading_extension()[0]:  # loading: the declared default
            return default
        # in a call, or in a thread the extension started: the host resolves the current value
        return self._caller.call(TargetKind.SDK, SETTING_VALUE, (setting_id, default), {})


def served_on_loop(runtime: Runtime | None, name: str) -> Callable[..., Awaitable[Any]] | None:
    """The coroutine function serving the operation a worker's SDK frame names on the host's
    loop, when ``runtime`` serves it there (``HostRuntime.on_loop``); None: :func:`run_service`
    serves it, in a thread."""
    operation = _operation(name)
    on_loop = getattr(runtime, "on_loop", None)
    return None if on_loop is None else on_loop(operation)


def run_service(runtime: Runtime | None, name: str, args: tuple, kwargs: dict) -> Any:
    """Run the runtime operation a worker's SDK frame names in ``runtime``, the host's (the
    caller sets the context of the tool call it was made from; None: as outside Vis), in a
    thread. One the runtime serves on its loop (:func:`served_on_loop`) is refused: this
    serves it only while the loop itself waits on the worker."""
    operation = _operation(name)
    if served_on_loop(runtime, name) is not None:
        raise RuntimeError(loop_waits(f"vis {operation}"))
    return getattr(OUTSIDE if runtime is None else runtime, operation)(*args, **kwargs)


def _operation(name: str) -> str:
    operation = name.removeprefix(RUNTIME)
    if not name.startswith(RUNTIME) or operation not in OPERATIONS:
        raise LookupError(f"{operation!r} is not an operation of the SDK runtime")
    return operation


def loop_waits(what: str) -> str:
    """Why ``what`` cannot be served while the host's loop waits on the worker."""
    return (
        f"{what} waits on Vis's event loop, which waits on your extension now (Vis runs one "
        "of its functions, such as a form's check); make the call from the tool instead"
    )
