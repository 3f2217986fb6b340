"""Where a stdio server starts: a neutral folder and a ``PATH`` that does not reach the workspace.

The person's own servers (user ``mcp.json``, extensions) start in every workspace, trusted or
not. From the workspace, ``npx -y pkg`` would run the checkout's ``node_modules/.bin`` copy and
``python -m server`` its ``server.py``; so they start in an empty private folder under Vis's
data folder (masked in the jail, nothing in it a checkout put there), unless the entry sets
``cwd``, with a ``PATH`` whose entries all lie outside the workspace. A project's own servers
(its ``.vis/mcp.json``, read only once the project is trusted) keep starting in the workspace.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from vis_core.paths import VisPaths
from vis_core.system.lifetime import keeper_command

START_FOLDER = "mcp-servers"  # under the data folder: where the person's stdio servers start


def start_folder(paths: VisPaths | None = None) -> Path:
    """The empty private folder (0700) the person's stdio servers start in."""
    return (paths or VisPaths.from_env()).data_dir / START_FOLDER


def kept(command: str, args: list[str], cwd: Path, path: str) -> tuple[str, list[str]]:
    """``command args`` as the program and arguments that start it under a keeper
    (:mod:`vis_core.system.keeper`, mode ``server``): the SDK starts a server in a session of
    its own, tied to nothing, so a Vis ended by ``kill -9`` left it, and what it started (the
    ``node`` under ``npx``), running for ever; the keeper ends them with Vis. Raises
    :class:`FileNotFoundError`, as starting it would, when ``command`` is neither on ``path``
    (the server's ``PATH``) nor a file from ``cwd``."""
    if os.sep in command:
        found = (cwd / command).is_file() and os.access(cwd / command, os.X_OK)
    else:
        found = shutil.which(command, path=path) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, "no such command or file", command)
    keeper = keeper_command([command, *args], "server", None, -1)
    return keeper[0], keeper[1:]
