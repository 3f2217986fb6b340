"""Build metadata globals of the sandbox: VIS_VERSION, VIS_SHA_RELEASE, VIS_PYTHON_SDK_VERSION."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

import vis_core

#: the folder that holds the ``vis_core`` package (the checkout root for a source install)
VIS_ROOT = Path(vis_core.__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(VIS_ROOT), *args], capture_output=True,
                              text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.cache
def release_sha() -> str | None:
    """The git commit of the Vis checkout, ``-dirty`` when tracked files changed; else None."""
    if not (VIS_ROOT / ".git").exists():
        return None
    sha = _git("rev-parse", "HEAD")
    if not sha:
        return None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return f"{sha}-dirty" if status else sha


def build_metadata() -> dict[str, Any]:
    """The host-side build globals (the child adds ``VIS_PYTHON_RUNTIME_VERSION`` itself)."""
    return {
        "VIS_VERSION": vis_core.__version__,
        "VIS_SHA_RELEASE": release_sha(),
        "VIS_PYTHON_SDK_VERSION": vis_core.__version__,
    }
