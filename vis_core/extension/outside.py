"""The runtime of a process that is not Vis (a plain script, an extension's unit test): state
and attachments in memory, the log file under ``VIS_HOME``, no person to ask or show."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import current_call
from vis_core.extension.errors import OUTSIDE_VIS
from vis_core.extension.runtime import Runtime
from vis_core.model.plain import check_plain

if TYPE_CHECKING:
    from vis_core.extension.attachments import Stored
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.fs import JailTerms
    from vis_core.extension.live import LiveView
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.model.activity import ActivityPresentation


class OutsideVis(Runtime):
    """What SDK calls do when no Vis process serves them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str | None, dict[str, Any]] = {}

    def extension_path(self, owner: str) -> Path | None:
        return None

    # -- state: in memory for the process --------------------------------------------------------
    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        with self._lock:
            values = self._state.get(owner, {})
            return key in values, values.get(key)

    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        check_plain(value, f"the state value {key!r}")  # the same plain-data rule as in Vis
        with self._lock:
            if value is None:
                self._state.get(owner, {}).pop(key, None)
            else:
                self._state.setdefault(owner, {})[key] = value

    def state_delete(self, owner: str | None, key: str) -> bool:
        with self._lock:
            values = self._state.get(owner, {})
            return values.pop(key, _GONE) is not _GONE

    def state_keys(self, owner: str | None) -> list[str]:
        with self._lock:
            return sorted(self._state.get(owner, {}))

    def state_items(self, owner: str | None) -> dict[str, Any]:
        with self._lock:
            return dict(sorted(self._state.get(owner, {}).items()))

    def state_clear(self, owner: str | None) -> None:
        with self._lock:
            self._state.pop(owner, None)

    # -- log and notify: the log file --------------------------------------------------------------
    def log(self, level: str, message: str, source: str) -> None:
        from vis_core.extension.logs import write_log

        write_log(level, message, source=source)

    def notify(self, text: str, kind: str) -> bool:
        return False  # no session shows it: the SDK logs it

    # -- no person -------------------------------------------------------------------------------
    def ask(self, form: Form) -> Answer:
        from vis_core.extension.forms import Answer, AnswerReason

        return Answer(reason=AnswerReason.UNDELIVERABLE)

    def open_live(
        self,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: Any,
        key: str | None,
        flush_ms: int,
    ) -> LiveView:
        from vis_core.extension.live import NoSink, open_view

        return open_view(title, nodes, placement, key, flush_ms, NoSink())

    # -- sessions: only a Vis process has them -------------------------------------------------
    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        raise RuntimeError(f"vis.list_sessions() {OUTSIDE_VIS}")

    def read_session(self, session_id: str | None) -> dict[str, Any]:
        raise RuntimeError(f"vis.read_session() {OUTSIDE_VIS}")

    def sessions(self) -> Any:
        raise RuntimeError(f"vis.sessions {OUTSIDE_VIS}")

    def council(self) -> Any:
        raise RuntimeError(
            "vis.council is the Council handle of the session that called your extension, and "
            "no session did; use it inside a tool call or command of a session"
        )

    def bound_session(self) -> Any:
        raise RuntimeError(
            "vis.session is the session that called your extension, and no session did; "
            "use it inside a tool call or command of a session"
        )

    # -- attachments: in memory ------------------------------------------------------------------
    def attachment_add(
        self,
        data: bytes,
        filename: str,
        media_type: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        from vis_core.extension.attachments import MEMORY

        return MEMORY.add(data, filename, media_type, audience, commentable, label)

    def attachment_list(self, filename: str | None) -> list[dict[str, Any]]:
        from vis_core.extension.attachments import MEMORY

        return MEMORY.listed(filename)

    def attachment_find(self, key: str, version: int | None, what: str) -> Stored:
        from vis_core.extension.attachments import memory_find

        return memory_find(key, version, what)

    def attachment_read(self, key: str, version: int | None) -> bytes:
        from vis_core.extension.attachments import memory_read

        return memory_read(key, version)

    def attachment_show(self, key: str, version: int | None) -> dict[str, Any]:
        from vis_core.extension.attachments import memory_show

        return memory_show(key, version)

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise RuntimeError(
            f"vis.tools.{name} works only while a Vis session runs your extension; outside a "
            "session (for example in unit tests), import and call the other package directly"
        )

    # -- the running call ----------------------------------------------------------------------
    def publish_activity(self, presentation: ActivityPresentation) -> None:
        call = current_call()
        if call is None or call.publish is None:
            raise RuntimeError("publish_activity works only while Vis runs one of your tools")
        call.publish(presentation)

    def setting_value(self, setting_id: str, default: Any) -> Any:
        return default  # no settings here: the declared default

    def register_mcp_server(self, owner: str, server: McpServer) -> None:
        return None  # no session runs here: the declaration is read when one starts

    def jail_terms(self) -> JailTerms:
        from vis_core.extension.fs import JailTerms

        return JailTerms()

    def mutation_loop(self) -> asyncio.AbstractEventLoop | None:
        return None  # no session's patch runs in this process

    def save_output(self, text: str, label: str) -> Path:
        from vis_core.extension.runtime import output_dir
        from vis_core.paths import write_private
        from vis_core.text_limits import output_path

        # outside Vis no settings are loaded, so there is no secret to redact
        path = output_path(output_dir(), label)
        return write_private(path, text.encode("utf-8", "surrogateescape"))

    def run_git(self, args: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess[bytes]:
        from vis_core.extension.workspace import hardened_git

        return hardened_git(args, cwd)


_GONE = object()
OUTSIDE = OutsideVis()
