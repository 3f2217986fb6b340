"""The SDK's runtime inside ``python_execution``: the model's code may build declarations, but
what belongs to trusted extension code (registration, state, sessions, tools, files and
processes) is refused with a message that says so."""

from __future__ import annotations

from typing import Any, NoReturn

from vis_core.extension.outside import OutsideVis
from vis_core.extension.place import in_sandbox


def _refuse(what: str) -> NoReturn:
    raise RuntimeError(in_sandbox(what))


class SandboxRuntime(OutsideVis):
    """Untrusted: ``vis.register_extension``, ``vis.state``, ``vis.log``, ``vis.notify``,
    attachments, ``vis.fs``, ``vis.shell``, sessions and ``vis.tools`` refuse; views and forms
    behave as outside Vis (no host)."""

    trusted = False

    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        _refuse("vis.state")

    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        _refuse("vis.state")

    def state_delete(self, owner: str | None, key: str) -> bool:
        _refuse("vis.state")

    def state_keys(self, owner: str | None) -> list[str]:
        _refuse("vis.state")

    def state_items(self, owner: str | None) -> dict[str, Any]:
        _refuse("vis.state")

    def state_clear(self, owner: str | None) -> None:
        _refuse("vis.state")

    def log(self, level: str, message: str, source: str) -> None:
        _refuse("vis.log")

    def notify(self, text: str, kind: str) -> bool:
        _refuse("vis.notify")

    def attachment_add(
        self,
        data: bytes,
        filename: str,
        media_type: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        _refuse("vis.attach (python_execution has its own attach())")

    def attachment_list(self, filename: str | None) -> list[dict[str, Any]]:
        _refuse("vis.list_attachments")

    def attachment_find(self, key: str, version: int | None, what: str) -> Any:
        _refuse(what)

    def attachment_read(self, key: str, version: int | None) -> bytes:
        _refuse("vis.read_attachment")

    def attachment_show(self, key: str, version: int | None) -> dict[str, Any]:
        _refuse("vis.show_attachment")

    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        _refuse("vis.list_sessions()")

    def read_session(self, session_id: str | None) -> dict[str, Any]:
        _refuse("vis.read_session()")

    def sessions(self) -> Any:
        _refuse("vis.sessions")

    def bound_session(self) -> Any:
        _refuse("vis.session")

    def council(self) -> Any:
        _refuse("vis.council")

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        _refuse(f"vis.tools.{name}")

    def jail_terms(self) -> Any:
        _refuse("vis.jailed_shell")

    def run_git(self, args: tuple[str, ...], cwd: Any) -> Any:
        _refuse("vis.git")


def enter_sandbox() -> None:
    """Make this process the model's sandbox (the python_execution child calls it once)."""
    from vis_core.extension.runtime import install

    install(SandboxRuntime())
