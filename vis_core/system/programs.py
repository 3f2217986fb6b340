"""Find the programs Vis runs itself (git, ripgrep) where no checkout can plant its own copy."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path


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
    fenced = {root for root in fenced if home is None or not home.is_relative_to(root)}
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or entry in kept:
            continue
        places = (Path(os.path.normpath(entry)), Path(os.path.realpath(entry)))
        if any(place.is_relative_to(root) for place in places for root in fenced):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def host_program(name: str, roots: Iterable[Path]) -> str | None:
    """The absolute path of ``name`` on this process's ``PATH``, looked up only in folders
    outside ``roots`` (the workspace, the project): a ``PATH`` with ``.``, an empty entry or
    ``node_modules/.bin`` never picks a checkout's ``./git``. None when there is none."""
    return shutil.which(name, path=path_outside(os.environ.get("PATH", os.defpath), roots))


def settle_processor(roots: Iterable[Path]) -> None:
    """Learn ``platform.uname().processor`` now, from the ``uname`` :func:`host_program`
    finds: Python runs ``uname -p`` by name off ``PATH`` the first time it is asked (the
    openai SDK's ``platform.platform()`` does, for a request header), which with an empty or
    ``.`` entry ran a checkout's ``./uname``. The answer is kept where Python keeps its own
    (``processor`` is a cached property of the cached ``uname()``)."""
    known = vars(platform.uname())
    if "processor" in known:
        return
    found = host_program("uname", roots)
    answer = ""
    if found is not None:
        try:
            done = subprocess.run(
                [found, "-p"], capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL
            )
            answer = done.stdout.strip() if done.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            answer = ""
    known["processor"] = "" if answer == "unknown" else answer
