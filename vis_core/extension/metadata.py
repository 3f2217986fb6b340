"""Build metadata globals (``VIS_VERSION``…) given to extension entry files and python_execution."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path

import vis_core

DISTRIBUTION = "vis-agent"
METADATA_NAMES = (
    "VIS_VERSION",
    "VIS_SHA_RELEASE",
    "VIS_PYTHON_RUNTIME_VERSION",
    "VIS_PYTHON_SDK_VERSION",
)
# The sandbox runtime (vis_core.sandbox) ships inside vis_core, so it shares its version.
RUNTIME_VERSION = vis_core.__version__


def _git(root: Path, *args: str) -> str | None:
    """``git args`` in Vis's own checkout, immune to its config (it may be the workspace)."""
    from vis_core.system.git import GitFailed, run_git

    try:
        done = run_git(args, root, timeout=5)
    except GitFailed:
        return None
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None


def _source_root() -> Path:
    return Path(vis_core.__file__).resolve().parent.parent


def _checkout() -> Path | None:
    """Vis's source checkout when the build commit is read from it with git: there is one,
    and no ``VIS_SHA_RELEASE`` stamp names the commit."""
    root = _source_root()
    return root if not os.environ.get("VIS_SHA_RELEASE") and (root / ".git").exists() else None


def _release_sha() -> str | None:
    """The build commit: ``VIS_SHA_RELEASE`` from the environment, else the source checkout."""
    root = _checkout()
    if root is None:
        return os.environ.get("VIS_SHA_RELEASE") or None
    # one git run: the commit (``# branch.oid``) and the changed tracked files, if any
    status = _git(root, "status", "--porcelain=v2", "--branch", "--untracked-files=no")
    if status is None:
        return None
    lines = status.splitlines()
    sha = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if sha is None or sha == "(initial)":
        return None
    dirty = any(not line.startswith("#") for line in lines)
    return f"{sha}-dirty" if dirty else sha


def _sdk_version() -> str:
    from vis_core import installed

    return installed.version(DISTRIBUTION) or "dev"


@functools.cache
def _computed() -> tuple[tuple[str, str | None], ...]:
    return (
        ("VIS_VERSION", vis_core.__version__),
        ("VIS_SHA_RELEASE", _release_sha()),
        ("VIS_PYTHON_RUNTIME_VERSION", RUNTIME_VERSION),
        ("VIS_PYTHON_SDK_VERSION", _sdk_version()),
    )


_warming: list[threading.Thread] = []


def warm() -> None:
    """Start computing the build globals in a thread: in a source checkout that runs ``git``
    (its configuration, then its status), which then overlaps the start's other work;
    :func:`build_metadata` waits. What the thread runs is imported here first: a thread that
    imports beside the caller's imports hands the GIL back and forth with them at every file
    either reads."""
    if _warming:
        return
    from vis_core import installed  # noqa: F401

    if _checkout() is not None:  # keeper: each git run's hold looks for the model's processes;
        import queue  # noqa: F401 (the first git run may make the thread that starts children)

        from vis_core.system import git, keeper  # noqa: F401
    thread = threading.Thread(target=_computed, name="vis-build-metadata", daemon=True)
    _warming.append(thread)
    thread.start()


def build_metadata() -> dict[str, str | None]:
    """The four build globals, computed once per process (a fresh dict on every call)."""
    if _warming and _warming[0] is not threading.current_thread():
        _warming[0].join()
    return dict(_computed())
