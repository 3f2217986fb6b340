"""Keep what the registration worker reported for the bundled extensions between starts.

The bundled extensions (Vis's own ``extensions/`` folder) load in the registration worker like
any other, which costs a start a worker process (~0.4 s). Their declarations change only with
their files or with Vis, so the reports (the data :mod:`declared` rebuilds from) are kept in
one JSON file with a key of everything that shapes them: the cache format, Vis's version, the
Python version, the size and modification time of every ``.py`` file of ``vis_core`` (a source
checkout changes without a new version), and the path, size and content hash of every file of
the bundled folder (hashing them costs ~0.2 ms). A start whose key matches rebuilds the
declarations from the file and runs no bundled entry file anywhere.

The file lives in Vis's cache folder (``$VIS_HOME/cache``, else the user cache folder), never
in the installed package or the source tree. It is written to a temporary file and renamed
into place. One that is missing, unreadable, damaged, of another format or for another key is
ignored and written again; only the bundled extensions are kept (any other entry file may
read its environment at import, so it loads every time).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import vis_core
from vis_core.codegen_cache import cache_dir
from vis_core.extension_host.discovery import Candidate
from vis_core.paths import PRIVATE_FILE_MODE

log = logging.getLogger(__name__)

FORMAT = 2  # 2: a state-only ctx reports its answer against empty state
FILE_NAME = "bundled-declarations.json"
_SKIPPED_FOLDERS = ("__pycache__",)


def cache_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the cache is read and written, whichever bundled folder it is of (its key names
    the folder, so a copy's cache is told apart from the shipped folder's)."""
    return cache_dir(environ) / FILE_NAME


def _walk(root: Path, hashed: bool) -> list[list[Any]]:
    """``[relative path, size, content hash or mtime_ns]`` of each file under ``root``, sorted
    (``.py`` files only when not ``hashed``). Plain strings and ``os.scandir``: it runs at
    every start, over ~230 files of ``vis_core``."""
    import hashlib  # with the host's load, not with `vis`'s imports before the first frame

    top = os.fspath(root)
    skip = len(top) + 1
    rows: list[list[Any]] = []
    folders = [top]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if name not in _SKIPPED_FOLDERS:
                        folders.append(entry.path)
                    continue
                if hashed:
                    with open(entry.path, "rb") as source:
                        data = source.read()
                    mark: Any = hashlib.blake2b(data, digest_size=16).hexdigest()
                    rows.append([entry.path[skip:], len(data), mark])
                elif name.endswith(".py"):
                    stat = entry.stat()
                    rows.append([entry.path[skip:], stat.st_size, stat.st_mtime_ns])
    rows.sort()
    return rows


def cache_key(bundled: Path, candidates: Iterable[Candidate]) -> dict[str, Any]:
    """Everything the bundled declarations depend on; ``OSError`` if a file cannot be read."""
    import hashlib

    core = Path(vis_core.__file__).resolve().parent
    stamp = hashlib.blake2b(json.dumps(_walk(core, hashed=False)).encode(), digest_size=16)
    return {
        "format": FORMAT,
        "vis": vis_core.__version__,
        "python": sys.version,
        "vis_core": [str(core), stamp.hexdigest()],
        "bundled": str(bundled.resolve()),
        "files": _walk(bundled, hashed=True),
        "candidates": [
            [str(c.entry_file), c.module_name, c.is_package, c.source.value] for c in candidates
        ],
    }


def read(path: Path, key: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """The kept declarations by entry file, when ``path`` holds them under ``key``."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # unreadable or damaged: loaded again, rewritten
        log.info("the bundled extensions' cache %s is unreadable (%s); rebuilt", path, exc)
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None  # another format, Vis, Python or bundled files
    declarations = data.get("declarations")
    if isinstance(declarations, dict) and all(
        isinstance(name, str) and isinstance(value, dict) for name, value in declarations.items()
    ):
        return declarations
    return None


def write(path: Path, key: Mapping[str, Any], declarations: Mapping[str, dict[str, Any]]) -> bool:
    """Keep ``declarations`` under ``key`` in ``path`` (a temporary file renamed into place);
    False when it cannot be written."""
    from vis_core.system.files import atomic_write  # only when the cache is written again

    text = json.dumps({"key": key, "declarations": declarations}).encode()
    try:
        atomic_write(path, text, mode=PRIVATE_FILE_MODE)
    except OSError as exc:  # a read-only cache folder: loaded each time
        log.debug("cannot keep the bundled extensions' cache in %s: %s", path, exc)
        return False
    return True
