"""Find the programs Vis runs itself (git, ripgrep) where no checkout can plant its own copy."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path


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


def host_program(name: str, roots: Iterable[Path]) -> str | None:
    """The absolute path of ``name`` on this process's ``PATH``, looked up only in folders
    outside ``roots`` (the workspace, the project): a ``PATH`` with ``.``, an empty entry or
    ``node_modules/.bin`` never picks a checkout's ``./git``. None when there is none."""
    return shutil.which(name, path=path_outside(os.environ.get("PATH", os.defpath), roots))
