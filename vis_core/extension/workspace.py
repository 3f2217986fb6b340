"""``vis.git`` (Vis's hardened git), ``vis.workspace_files()`` (Git's view, shared for 2 s) and
``vis.python_environment()``."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import tomllib
from collections.abc import Callable
from enum import Enum, auto
from pathlib import Path
from typing import Any

import yaml

from vis_core.extension.context import current_call
from vis_core.extension.place import require_trusted
from vis_core.extension.roots import project_root, workspace_root
from vis_core.extension.runtime import current_runtime
from vis_core.paths import VisPaths, project_trusted
from vis_core.small_files import load_yaml, small_bytes
from vis_core.system.git import (
    MAX_LISTED,
    MAX_LISTED_BYTES,
    Entries,
    GitFailed,
    TooMany,
    too_many,
)

SHARE_SECONDS = 2.0
ENVIRONMENTS = ("project", "shared")
YAML_LIMIT = 1 << 20  # bytes of vis.yml read for python.environment


class _Unlisted(Enum):
    """Why Git gave no listing of a root."""

    OUTSIDE_GIT = auto()
    TOO_MANY = auto()  # Git named more than any listing Vis reads from Git takes (stopped)


_cache: dict[Path, tuple[float, tuple[Path, ...] | _Unlisted]] = {}
_cache_lock = threading.Lock()
_listing_locks: dict[Path, threading.Lock] = {}


def git(
    *args: str, cwd: str | os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd`` (default: ``vis.workspace_root()``) the way Vis runs git:
    the repository's configuration cannot start programs (hooks, fsmonitor, pagers, external
    diff, textconv, filters), and with the jail on, git runs inside it. Returns the completed
    process (bytes output); raises ``vis.GitFailed`` when git cannot start or refuses."""
    require_trusted("vis.git")
    if not args or not all(isinstance(arg, str) for arg in args):
        raise TypeError("vis.git takes git's arguments as text, e.g. vis.git('status')")
    root = workspace_root() if cwd is None else Path(cwd)
    return current_runtime().run_git(tuple(args), root)


def hardened_git(
    args: tuple[str, ...], cwd: Path, take: Callable[[bytes], None] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The trusted processes' runner behind :func:`git` (the host's, a worker's, a script's):
    :func:`~vis_core.system.git.run_git` (``take``: given its output as it comes), jailed
    when the session's jail is on. Raises :class:`PermissionError` when the jail setting
    cannot be read (fail closed)."""
    from vis_core.extension.fs import jail_enabled
    from vis_core.system.git import run_git

    if not jail_enabled():  # git may look into a repository inside: its drivers go too
        return run_git(args, cwd, take=take, nested=True)
    root, looks = workspace_root(), current_runtime().git_looks
    return run_git(
        args, cwd, jail_workspace=root, project_root=project_root(), git_looks=looks, take=take
    )


def _git_files(root: Path) -> tuple[Path, ...] | _Unlisted:
    """Tracked files and untracked files Git does not ignore, under ``root``, or why there
    is no listing of them."""
    entries = Entries(MAX_LISTED, MAX_LISTED_BYTES)
    args = ("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    try:
        done = current_runtime().run_git(args, root, take=entries.take)
    except TooMany:
        return _Unlisted.TOO_MANY
    except GitFailed:
        return _Unlisted.OUTSIDE_GIT
    if done.returncode != 0:
        return _Unlisted.OUTSIDE_GIT
    names = dict.fromkeys(n.decode("utf-8", "replace") for n in entries.items if n)
    return tuple(root / name for name in names)


def workspace_files() -> list[Path] | None:
    """The files Git sees under ``vis.workspace_root()``; None outside a Git working tree.

    Every extension that asks within two seconds gets the same listing. Raises
    :class:`RuntimeError` naming the bound when Git sees more than 300,000 files or 64 MiB
    of file names there: such a listing would take the extension's memory.
    """
    require_trusted("vis.workspace_files()")
    root = workspace_root().resolve()
    with _cache_lock:
        lock = _listing_locks.setdefault(root, threading.Lock())
    with lock:  # one git listing at a time per root; waiters reuse its result
        with _cache_lock:
            cached = _cache.get(root)
        if cached is not None and time.monotonic() - cached[0] < SHARE_SECONDS:
            files = cached[1]
        else:
            files = _git_files(root)
            with _cache_lock:
                _cache[root] = (time.monotonic(), files)
    if files is _Unlisted.TOO_MANY:
        raise RuntimeError(f"vis.workspace_files(): {root} holds {too_many()}, more than it lists")
    return None if files is _Unlisted.OUTSIDE_GIT else list(files)


def python_environment() -> str:
    """``project`` (the default) or ``shared`` from ``python.environment`` of the session's
    project (``vis.yml``), else ``config.toml``; ``project`` outside Vis."""
    if current_call() is None:
        return "project"
    root = project_root()
    project_file = root / "vis.yml"
    value = _lookup(_yaml(project_file), project_file) if project_trusted(root) else None
    if value is None:
        config_file = VisPaths.from_env().config_file
        value = _lookup(_toml(config_file), config_file)
    return "project" if value is None else value


def _lookup(data: dict[str, Any], source: Path) -> str | None:
    python = data.get("python")
    value = python.get("environment") if isinstance(python, dict) else None
    if value is None:
        value = data.get("python.environment")
    if value is None:
        return None
    if value not in ENVIRONMENTS:
        raise ValueError(
            f"python.environment in {source} is {value!r}; use 'project' (the project's own "
            "environment) or 'shared'"
        )
    return str(value)


def _yaml(path: Path) -> dict[str, Any]:
    """The mapping of a project's ``vis.yml``: empty when it is absent or not a regular file
    of at most :data:`YAML_LIMIT` bytes (a named pipe there would never answer)."""
    raw = small_bytes(path, YAML_LIMIT)
    if raw is None:
        return {}
    try:
        data = load_yaml(raw.decode("utf-8", errors="replace"))
    except RecursionError:
        raise ValueError(_too_deep(path)) from None
    except yaml.YAMLError as exc:
        raise ValueError(
            f"{path} is not valid YAML ({exc}); fix it to read python.environment"
        ) from None
    return data if isinstance(data, dict) else {}


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except RecursionError:
        raise ValueError(_too_deep(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(
            f"{path} is not valid TOML ({exc}); fix it to read python.environment"
        ) from None


def _too_deep(path: Path) -> str:
    return f"{path} nests too deeply to read; fix it to read python.environment"
