"""``vis.workspace_root()`` and ``vis.project_root()``: the bound session's roots, else the cwd."""

from __future__ import annotations

from pathlib import Path

from vis_core.extension.context import current_call


def workspace_root() -> Path:
    """The session's current working copy; the process working directory outside Vis."""
    call = current_call()
    return Path(call.workspace_root) if call is not None else Path.cwd()


def project_root() -> Path:
    """The project that holds the calling extension; the process working directory outside Vis."""
    call = current_call()
    return Path(call.project_root) if call is not None else Path.cwd()
