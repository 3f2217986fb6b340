"""What the Python environment has installed (entry points, distribution versions), kept
between starts while the ``sys.path`` folders are unchanged.

Reading every installed distribution's metadata (``importlib.metadata``) costs a start tens of
milliseconds. Installing, upgrading or removing a distribution adds or removes a
``.dist-info`` folder in a ``sys.path`` folder, which changes that folder's modification
time; so the answers are kept with those times in one small file in Vis's cache folder
(``$VIS_HOME/cache``, else the user cache folder; never in the installed package), and used
while they are unchanged. Vis's own child processes start isolated (no script folder on
``sys.path``): the file keeps the answers of a few ``sys.path``s side by side, so a worker's
answers do not replace those of ``vis`` (each start then read the distributions again).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from vis_core.codegen_cache import cache_dir, write_cache

EntryPoint = tuple[str, str, str | None]  # name, module, distribution


def cache_file() -> Path:
    """Where the answers are kept, in Vis's cache folder (:func:`codegen_cache.cache_dir`)."""
    return cache_dir() / "vis-installed.json"


def _sys_path_marks() -> list[list[Any]]:
    marks: list[list[Any]] = []
    for entry in sys.path:
        try:
            marks.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            marks.append([entry, None])
    return marks


_KEPT_PATHS = 4  # the sys.paths whose answers the file keeps (vis, its workers, a test's)


def _load(cache: Path) -> list[dict[str, Any]]:
    """The file's ``[{"sys_path": marks, "answers": {...}}, ...]``, newest first."""
    # none yet, damaged or another format
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data["python"] == sys.version:
            return [
                {"sys_path": entry["sys_path"], "answers": dict(entry["answers"])}
                for entry in data["paths"]
            ]
    return []


def _keep(cache: Path, kept: list[dict[str, Any]]) -> None:
    text = json.dumps({"python": sys.version, "paths": kept[:_KEPT_PATHS]})
    write_cache(cache, text.encode())  # a folder that cannot be written: read again next time


def _answer(key: str, compute: Any, cache: Path | None) -> Any:
    cache = cache_file() if cache is None else cache
    marks = _sys_path_marks()
    kept = _load(cache)
    mine = next((entry for entry in kept if entry["sys_path"] == marks), None)
    if mine is not None and key in mine["answers"]:
        return mine["answers"][key]
    value = compute()
    answers = {**(mine["answers"] if mine is not None else {}), key: value}
    others = [entry for entry in kept if entry is not mine]
    _keep(cache, [{"sys_path": marks, "answers": answers}, *others])
    return value


def entry_points(group: str, cache: Path | None = None) -> list[EntryPoint]:
    """``(name, module, distribution)`` of each entry point of ``group``, by name."""

    def scan() -> list[list[Any]]:
        import importlib.metadata

        found = sorted(importlib.metadata.entry_points(group=group), key=lambda e: e.name)
        return [[ep.name, ep.module, ep.dist.name if ep.dist else None] for ep in found]

    rows = _answer(f"entry_points:{group}", scan, cache)
    return [(str(n), str(m), None if d is None else str(d)) for n, m, d in rows]


def version(distribution: str, cache: Path | None = None) -> str | None:
    """The installed version of ``distribution``; ``None`` when it is not installed."""

    def read() -> str | None:
        import importlib.metadata

        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    found = _answer(f"version:{distribution}", read, cache)
    return None if found is None else str(found)
