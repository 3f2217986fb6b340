"""The SDK's runtime inside ``python_execution``: the model's code may build declarations, but
what belongs to trusted extension code (registration, state, sessions, tools, files and
processes) is refused with a message that says so."""

from __future__ import annotations

from typing import Any, NoReturn

from vis_core.extension.place import in_sandbox
from vis_core.extension.runtime import Runtime, install


def _refuse(what: str) -> NoReturn:
    raise RuntimeError(in_sandbox(what))


def _refused(what: str) -> Any:
    """A runtime operation that refuses, naming ``what`` the model's code asked for."""

    def refuse(self: SandboxRuntime, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(what)

    return refuse


class SandboxRuntime(Runtime):
    """Untrusted: ``vis.register_extension``, ``vis.state``, ``vis.log``, ``vis.notify``,
    attachments, ``vis.fs``, ``vis.shell``, sessions, ``vis.tools``, forms (``vis.ask``) and
    live views (``vis.live``) refuse: each would reach the host or the person."""

    trusted = False

    state_read = state_write = state_delete = _refused("vis.state")
    state_keys = state_items = state_clear = _refused("vis.state")
    log = _refused("vis.log")
    notify = _refused("vis.notify")
    attachment_add = _refused("vis.attach (python_execution has its own attach())")
    attachment_list = _refused("vis.list_attachments")
    attachment_read = _refused("vis.read_attachment")
    attachment_show = _refused("vis.show_attachment")
    list_sessions = _refused("vis.list_sessions()")
    read_session = _refused("vis.read_session()")
    sessions = _refused("vis.sessions")
    bound_session = _refused("vis.session")
    council = _refused("vis.council")
    jail_terms = _refused("vis.jailed_shell")
    run_git = _refused("vis.git")
    ask = _refused("vis.ask")
    open_live = _refused("vis.live")

    def attachment_find(self, key: str, version: int | None, what: str) -> Any:
        _refuse(what)

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        _refuse(f"vis.tools.{name}")


def enter_sandbox() -> None:
    """Make this process the model's sandbox (the python_execution child calls it once)."""
    install(SandboxRuntime())
