"""Where a stdio server starts: a neutral folder and a ``PATH`` that does not reach the workspace.

The person's own servers (user ``mcp.json``, extensions) start in every workspace, trusted or
not. From the workspace, ``npx -y pkg`` would run the checkout's ``node_modules/.bin`` copy and
``python -m server`` its ``server.py``; so they start in an empty private folder under Vis's
data folder (masked in the jail, nothing in it a checkout put there), unless the entry sets
``cwd``, with a ``PATH`` whose entries all lie outside the workspace. A project's own servers
(its ``.vis/mcp.json``, read only once the project is trusted) keep starting in the workspace.
"""

from __future__ import annotations

from pathlib import Path

from vis_core.paths import VisPaths

START_FOLDER = "mcp-servers"  # under the data folder: where the person's stdio servers start


def start_folder(paths: VisPaths | None = None) -> Path:
    """The empty private folder (0700) the person's stdio servers start in."""
    return (paths or VisPaths.from_env()).data_dir / START_FOLDER
