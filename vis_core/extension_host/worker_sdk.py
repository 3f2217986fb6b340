"""The SDK runtime of an extension worker: each operation is a frame to the host, which runs
it in its own runtime inside the context of the tool call it was made from (or of no call, for
a thread or a load). Everything else of the SDK (declarations, records, roots, ``vis.fs``,
``vis.shell``, ``vis.file_mutation_queue``, whose ``flock`` every Vis process honours) runs in
the worker itself.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.acting import loading_extension
from vis_core.extension.context import current_call
from vis_core.extension.runtime import Runtime, operations
from vis_core.extension.runtime import install as install_runtime
from vis_core.ipc.messages import TargetKind

if TYPE_CHECKING:
    from vis_core.extension.attachments import Stored
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.fs import JailTerms
    from vis_core.extension.live import LiveView
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.model.activity import ActivityPresentation

RUNTIME = "runtime:"  # an SDK frame naming a runtime operation: ``runtime:state_read``
SETTING_VALUE = RUNTIME + "setting_value"  # also read by a thread of an extension (no call)


class WorkerRuntime(Runtime):
    """The SDK runtime of an extension worker: every operation runs in the host, in the
    context of the tool call it is made from (or of no call, for a thread or a load)."""

    def __init__(self, caller: Any) -> None:
        self._caller = caller

    def _host(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        return self._caller.call(TargetKind.SDK, RUNTIME + operation, args, kwargs)

    def extension_path(self, owner: str) -> Path | None:
        return self._host("extension_path", owner)

    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        return self._host("state_read", owner, key)

    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        self._host("state_write", owner, key, value)

    def state_delete(self, owner: str | None, key: str) -> bool:
        return self._host("state_delete", owner, key)

    def state_keys(self, owner: str | None) -> list[str]:
        return self._host("state_keys", owner)

    def state_items(self, owner: str | None) -> dict[str, Any]:
        return self._host("state_items", owner)

    def state_clear(self, owner: str | None) -> None:
        self._host("state_clear", owner)

    def log(self, level: str, message: str, source: str) -> None:
        self._host("log", level, message, source)

    def notify(self, text: str, kind: str) -> bool:
        return self._host("notify", text, kind)

    def ask(self, form: Form) -> Answer:
        return self._host("ask", form)

    def open_live(
        self,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: Any,
        key: str | None,
        flush_ms: int,
    ) -> LiveView:
        return self._host(
            "open_live", title, nodes, placement=placement, key=key, flush_ms=flush_ms
        )

    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        return self._host("list_sessions", search)

    def read_session(self, session_id: str | None) -> dict[str, Any]:
        return self._host("read_session", session_id)

    def sessions(self) -> Any:
        return self._host("sessions")

    def bound_session(self) -> Any:
        return self._host("bound_session")

    def council(self) -> Any:
        return self._host("council")

    def attachment_add(
        self,
        data: bytes,
        filename: str,
        media_type: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        return self._host(
            "attachment_add", data, filename, media_type, audience, commentable, label
        )

    def attachment_list(self, filename: str | None) -> list[dict[str, Any]]:
        return self._host("attachment_list", filename)

    def attachment_find(self, key: str, version: int | None, what: str) -> Stored:
        return self._host("attachment_find", key, version, what)

    def attachment_read(self, key: str, version: int | None) -> bytes:
        return self._host("attachment_read", key, version)

    def attachment_show(self, key: str, version: int | None) -> dict[str, Any]:
        return self._host("attachment_show", key, version)

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._host("call_tool", name, args, kwargs)

    def publish_activity(self, presentation: ActivityPresentation) -> None:
        self._host("publish_activity", presentation)

    def setting_value(self, setting_id: str, default: Any) -> Any:
        if current_call() is None and loading_extension()[0]:  # loading: the declared default
            return default
        # in a call, or in a thread the extension started: the host resolves the current value
        return self._host("setting_value", setting_id, default)

    def register_mcp_server(self, owner: str, server: McpServer) -> None:
        self._host("register_mcp_server", owner, server)

    def jail_terms(self) -> JailTerms:
        return self._host("jail_terms")

    def mutation_loop(self) -> asyncio.AbstractEventLoop | None:
        return None  # no session's patch runs in this process

    def save_output(self, text: str, label: str) -> Path:
        from vis_core.extension.runtime import output_dir
        from vis_core.system.truncate import save_full_output

        return save_full_output(text, output_dir(), label)

    def run_git(self, args: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess[bytes]:
        from vis_core.extension.workspace import hardened_git  # jailed by the host's terms

        return hardened_git(args, cwd)


def install(caller: Any) -> None:
    """Make this process's SDK calls run in the host (worker start)."""
    install_runtime(WorkerRuntime(caller))


def run_service(runtime: Runtime | None, name: str, args: tuple, kwargs: dict) -> Any:
    """Run the runtime operation a worker's SDK frame names in ``runtime``, the host's (the
    caller sets the context of the tool call it was made from); None: as outside Vis."""
    operation = name.removeprefix(RUNTIME)
    if not name.startswith(RUNTIME) or operation not in operations():
        raise LookupError(f"{operation!r} is not an operation of the SDK runtime")
    if runtime is None:
        from vis_core.extension.outside import OUTSIDE

        runtime = OUTSIDE
    return getattr(runtime, operation)(*args, **kwargs)
