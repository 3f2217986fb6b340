"""Keep the code ``dataclasses`` generates for Vis's own classes, as Python keeps bytecode.

Defining a dataclass compiles the source text of each method it adds (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, the frozen ``__setattr__``…): at ``vis run`` start
~170 classes paid for ~1,000 such compiles, a sixth of the process's CPU time. The text fully
determines the code (names are looked up in the globals and locals given when it runs), so
the code object is kept, keyed by that text, in one ``marshal`` file in the person's cache
folder (``$VIS_HOME/cache``, else the user cache folder; never in the installed package) and
run instead of compiling the text again. Each code object is marshalled on its own and read when
its class is first defined, not all of them with the file (the app's first frame uses about a
third). ``dataclasses`` calls ``exec(text, globals, ns)``; :func:`install` gives that module an
``exec`` that does exactly this for classes of Vis's packages and hands every other call to the
builtin unchanged.

The ``vis`` command installs it, and so do the extension workers
(:mod:`vis_core.extension_host.worker_start`), which also keep the classes only they define
(their own modules', the bundled extensions'): each saves once it loaded its entry files, as it
ends by ``os._exit`` or is killed, never through an exit handler. Not the sandbox child, whose
environment names no ``VIS_HOME`` and whose jail hides it. A cache that cannot be read is
ignored; one that cannot be written is not kept.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import marshal
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import CodeType
from typing import Any

# Vis's own code: its packages and the bundled extensions (as a worker names their modules,
# :mod:`vis_core.extension_host.discovery`); not another extension's
_PACKAGES = ("vis_core", "vis_tui", "vis_ext_bundled_")
_MAX_ENTRIES = 4000  # beyond this, only the texts this process used are kept
_FORMAT = 2  # 1 held the code objects themselves: reading the file built all of them

_codes: dict[str, CodeType | bytes] = {}  # bytes: the marshalled code, not read yet
_used: set[str] = set()


class _Cache:
    path: Path | None = None  # where this process reads and writes it
    added = False  # compiled something the file does not hold yet


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where Vis keeps what it can make again: ``$VIS_HOME/cache``, else the user cache folder.
    Kept here, in a module that imports nothing of Vis (so no dataclass is defined before
    :func:`install`), for every leaf that keeps a cache there."""
    env = os.environ if environ is None else environ
    home = env.get("VIS_HOME")
    if home:
        return Path(home).expanduser().resolve() / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("vis"))


def cache_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the cache is kept: in :func:`cache_dir`, never in the installed package."""
    return cache_dir(environ) / f"dataclass-code.{sys.implementation.cache_tag}.marshal"


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it, with Vis's generated code compiled once."""
    if type(source) is str and type(globals) is dict:
        module = globals.get("__name__")
        if type(module) is str and module.startswith(_PACKAGES):
            code = _code(source)
            if code is None:
                # as exec(text) compiles it: "<string>", no __future__ flags of this module
                code = compile(source, "<string>", "exec", dont_inherit=True)
                _codes[source] = code
                _Cache.added = True
            _used.add(source)
            return builtins.exec(code, globals, locals)
    return builtins.exec(source, globals, locals)


def _code(source: str) -> CodeType | None:
    """The kept code of ``source``, read from its marshalled bytes the first time."""
    kept = _codes.get(source)
    if type(kept) is bytes:
        try:
            kept = marshal.loads(kept)
        except (ValueError, EOFError, TypeError):  # a damaged entry: compiled again
            kept = None
        if type(kept) is CodeType:
            _codes[source] = kept
        else:
            del _codes[source]
    return kept if type(kept) is CodeType else None


def install(path: Path | None = None) -> bool:
    """Load the cache and route ``dataclasses``' compiles through it; save new code at exit.

    ``path``: where to read and write it (default :func:`cache_file`). Returns whether it was
    installed (once per process; not when ``dataclasses`` already has an ``exec`` of its
    own)."""
    import dataclasses

    if "exec" in vars(dataclasses):  # installed already (or by someone else): leave it
        return False
    _Cache.path = path or cache_file()
    _codes.update(_read(_Cache.path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # shadows the builtin there only
    atexit.register(save)
    return True


def _read(path: Path) -> dict[str, bytes]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):  # missing, damaged or another format
        return {}
    if (
        type(data) is not tuple
        or len(data) != 3
        or data[0] != _FORMAT
        or data[1] != sys.version
        or type(data[2]) is not dict
    ):
        return {}
    return {k: v for k, v in data[2].items() if type(k) is str and type(v) is bytes}


def save() -> None:
    """Write the cache when this process compiled something new (0600, in a 0700 folder it
    creates); other threads may go on defining classes meanwhile."""
    if not _Cache.added or _Cache.path is None:
        return
    _Cache.added = False  # before the copy: what a thread compiles meanwhile is saved next time
    # copies (one step each under the GIL): a thread may still be defining classes at exit
    codes = dict(_codes)
    kept = codes if len(codes) <= _MAX_ENTRIES else {k: codes[k] for k in set(_used) & codes.keys()}
    entries = {k: v if type(v) is bytes else marshal.dumps(v) for k, v in kept.items()}
    if not write_cache(_Cache.path, marshal.dumps((_FORMAT, sys.version, entries))):
        _Cache.added = True  # not kept (the next start compiles again): tried at the next save


def write_cache(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file renamed into place (0600, in a 0700
    folder it creates); False when it cannot be written (a read-only folder, a full disk)."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()
        return False
    return True
