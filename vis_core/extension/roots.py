"""``vis.workspace_root()`` and ``vis.project_root()``: the bound session's roots, else the cwd."""

from __future__ import annotations

from pathlib import Path

from vis_core.extension.context import CallContext, current_call
from vis_core.extension.place import require_trusted
from vis_core.extension.runtime import current_runtime


def _bound(call: CallContext, what: str) -> None:
    if call.session_id is None:
        raise RuntimeError(
            f"vis.{what}() needs the session that called your extension, and this call has "
            "none; call it from a tool or command of a session"
        )


def workspace_root() -> Path:
    """The session's current working copy; the process working directory outside Vis."""
    require_trusted("vis.workspace_root() (python_execution has project_root_path)")
    call = current_call()
    if call is None:
        return Path.cwd()
    _bound(call, "workspace_root")
    return Path(call.workspace_root)


def project_root() -> Path:
    """The project that holds the calling extension, inside the session's working copy.

    That is the nearest folder above the extension file that holds ``.vis``, when it lies in
    the working copy; else the session's project. The process working directory outside Vis.
    """
    require_trusted("vis.project_root() (python_execution has project_root_path)")
    call = current_call()
    if call is None:
        return Path.cwd()
    _bound(call, "project_root")
    workspace = Path(call.workspace_root)
    own = _extension_project(call)
    if own is not None and (own == workspace or workspace in own.parents):
        return own
    return Path(call.project_root)


def _extension_project(call: CallContext) -> Path | None:
    path = current_runtime().extension_path(call.owner)
    if path is None:
        return None
    for folder in Path(path).resolve().parents:
        if (folder / ".vis").is_dir():
            return folder
    return None
