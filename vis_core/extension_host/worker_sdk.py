"""The SDK services an extension worker reaches in the host: which ones, and how each side
names them.

In the worker, each public name below is replaced (on the ``vis`` facade and in its module) by
a :class:`ServiceProxy`: its attributes, calls and the mapping protocol (``vis.state["k"]``,
``vis.tools.git.status()``) run in the host inside the context of the tool call they are made
from, exactly as when the tool ran in the host. Everything else of the SDK
(declarations, records, truncation helpers, ``vis.fs`` and ``vis.file_mutation_queue``,
whose ``flock`` every Vis process honours) runs in the worker itself.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.runtime import Runtime, current_runtime, operations
from vis_core.extension.runtime import install as install_runtime
from vis_core.extension_host.worker_frames import TargetKind
from vis_core.extension_host.worker_values import Forwarding, run_method

if TYPE_CHECKING:
    from vis_core.extension.attachments import Stored
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.live import LiveView

# facade name -> the module that defines it
FORWARDED: dict[str, str] = {
    "publish_activity": "vis_core.extension.context",
    "workspace_root": "vis_core.extension.roots",
    "project_root": "vis_core.extension.roots",
    "workspace_files": "vis_core.extension.workspace",
    "python_environment": "vis_core.extension.workspace",
}


# host functions the worker's own SDK code calls while it serves a call (never at load):
# a run-time ``vis.mcp_server``, ``Setting.value()`` through the host's resolver, and the
# session's jail terms for ``vis.jailed_shell`` (children start in the worker, with its
# environment, never the host's)
IN_CALLS: dict[str, str] = {
    "_register_now": "vis_core.extension.mcp_servers",
    "value_of": "vis_core.extension.settings_decl",
    "_session_jail": "vis_core.extension.fs",
}


RUNTIME = "runtime:"  # an SDK frame naming a runtime operation: ``runtime:state_read``


class WorkerRuntime(Runtime):
    """The SDK runtime of an extension worker: every operation runs in the host, in the
    context of the tool call it is made from (or of no call, for a thread or a load)."""

    def __init__(self, caller: Any) -> None:
        self._caller = caller

    def _host(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        return self._caller.call(TargetKind.SDK, RUNTIME + operation, args, kwargs)

    def serves(self, session_id: str | None) -> bool:
        return True  # the worker serves one session: its host answers for it

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


class ServiceProxy(Forwarding):
    """``vis.<name>`` in a worker: the host's service of that name, reached over the channel."""

    __slots__ = ("_caller", "_path")

    def __init__(self, caller: Any, path: str) -> None:
        self._caller = caller
        self._path = path

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._caller.call(TargetKind.SDK, f"{self._path}:{method}", args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        # read in the host: data comes back as itself (``vis.session.id``), anything else
        # (a method, ``vis.tools.alpha``) as a reference whose calls run there
        return self._run("__getattr__", name)

    def __iter__(self) -> Any:
        return iter(self._run("__keys__"))

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<vis.{self._path} in the host>"


def install(caller: Any) -> None:
    """Make every forwarded SDK name of this process a proxy to the host (worker start)."""
    import vis_core.extension as facade

    for name, module in FORWARDED.items():
        proxy = ServiceProxy(caller, name)
        setattr(importlib.import_module(module), name, proxy)
        setattr(facade, name, proxy)
    _install_in_calls(caller)
    install_runtime(WorkerRuntime(caller))


def _install_in_calls(caller: Any) -> None:
    from vis_core.extension import mcp_servers, settings_decl

    fs: Any = importlib.import_module("vis_core.extension.fs")  # the package's fs is vis.fs
    from vis_core.extension.context import current_call

    register, value_of = ServiceProxy(caller, "_register_now"), ServiceProxy(caller, "value_of")
    session_jail = ServiceProxy(caller, "_session_jail")

    def register_now(declared: Any) -> None:
        if current_call() is not None:  # an entry file's declaration stays a declaration
            register(declared)

    def resolve(setting: Any) -> Any:
        return value_of(setting.id) if current_call() is not None else setting.default

    def jail_terms() -> Any:
        return session_jail() if current_call() is not None else fs.JailTerms()

    mcp_servers._register_now = register_now
    fs._session_jail = jail_terms
    settings_decl.set_value_resolver(resolve)


def run_service(name: str, args: tuple, kwargs: dict) -> Any:
    """Run ``name:method`` of a forwarded service in the host (the caller sets the context)."""
    if name.startswith(RUNTIME):  # an operation of the SDK runtime, run by the host's
        operation = name.removeprefix(RUNTIME)
        if operation not in operations():
            raise LookupError(f"{operation!r} is not an operation of the SDK runtime")
        return getattr(current_runtime(), operation)(*args, **kwargs)
    root, _, method = name.rpartition(":")
    module = FORWARDED.get(root) or IN_CALLS.get(root)
    if module is None:
        raise LookupError(f"vis.{root} is not a service extension workers reach in the host")
    value = getattr(importlib.import_module(module), root)
    if method == "__keys__":  # a mapping iterated in the worker: its keys, at once
        return list(value)
    return run_method(value, method, args, kwargs)
