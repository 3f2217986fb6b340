"""Where a stdio server starts: a neutral folder and a ``PATH`` that does not reach the workspace.

The person's own servers (user ``mcp.json``, extensions) start in every workspace, trusted or
not. From the workspace, ``npx -y pkg`` would run the checkout's ``node_modules/.bin`` copy and
``python -m server`` its ``server.py``; so they start in an empty private folder under Vis's
data folder (masked in the jail, nothing in it a checkout put there), unless the entry sets
``cwd``, with a ``PATH`` whose entries all lie outside the workspace. A project's own servers
(its ``.vis/mcp.json``, read only once the project is trusted) keep starting in the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from vis_core.paths import VisPaths, private_dir

START_FOLDER = "mcp-servers"  # under the data folder: where the person's stdio servers start


def start_folder(paths: VisPaths | None = None) -> Path:
    """The empty private folder (0700) the person's stdio servers start in."""
    return (paths or VisPaths.from_env()).data_dir / START_FOLDER


def ensure_start_folder(folder: Path) -> Path:
    """``folder`` made (0700) if needed."""
    return private_dir(folder)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def path_outside(value: str, roots: Iterable[Path]) -> str:
    """``value`` (a ``PATH``) without the entries that name a place in ``roots``: empty and
    relative ones (``.``, ``node_modules/.bin``: they name the working folder) and absolute ones
    inside a root, as written or once links are followed. A root that holds the home folder
    (``vis`` started in ``~`` or above it) fences nothing absolute: the person's own tool
    folders (``~/.local/bin``, ``/usr/bin``) lie there."""
    fenced = {root for r in roots for root in (Path(r).absolute(), Path(r).resolve())}
    try:
        home = Path.home().resolve()
    except RuntimeError:  # no home folder known: every root is fenced
        home = None
    fenced = {root for root in fenced if home is None or not _inside(home, root)}
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or entry in kept:
            continue
        places = (Path(os.path.normpath(entry)), Path(os.path.realpath(entry)))
        if any(_inside(place, root) for place in places for root in fenced):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)
