"""Refusals inside the jailed sandbox child: no direct process spawn, no ctypes, no Vis internals.

Defence in depth only: these run in the same process as the model's code, which can reach
around an in-process guard (``sys.modules``, C extension modules). The boundary is the jail
(bubblewrap: namespaces, no capability, the file system it is shown); these refusals make the
model use ``shell()`` (confined and shown to the person) and say so when it tries otherwise.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType
from typing import Any

from vis_core.system.child_process import VIS_PACKAGES

SPAWN_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "os.startfile",
    }
)
SPAWN_REFUSED = (
    "{event}: gateway policy, no direct spawn. The model's sandbox does not start processes "
    "itself under the jail; run the command with `await shell(...)`, which confines it and "
    "shows it to the person."
)
CTYPES_REFUSED = (
    "{event}: native calls through ctypes are refused in the model's sandbox under the jail."
)
# What a block may import of Vis: the public SDK only, under either of its names.
PUBLIC_SDK = ("vis_core.extension", "blockether.vis.extension")
SDK_PARENTS = ("blockether", "blockether.vis")  # packages that hold nothing but the SDK
NATIVE_REFUSED = (
    "import of {name!r} is refused in the model's sandbox under the jail: native calls "
    "through ctypes and direct process spawns are not allowed there; run commands with "
    "`await shell(...)`"
)
# Modules that start processes or call native code without an audit event of their own.
NATIVE_ONLY = ("_posixsubprocess", "_ctypes", "ctypes")
IMPORT_REFUSED = (
    "import of {name!r} is refused in the model's sandbox under the jail: only the public "
    "SDK (`import blockether.vis.extension as vis`, also named `vis_core.extension`) of Vis "
    "is importable there"
)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in SPAWN_EVENTS:
        raise PermissionError(SPAWN_REFUSED.format(event=event))
    if event.startswith("ctypes."):
        raise PermissionError(CTYPES_REFUSED.format(event=event))


def _is_vis(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in VIS_PACKAGES)


def _trusted(name: str, globals: dict[str, Any]) -> bool:
    """Whether an import of ``name`` by the module of ``globals`` is not the block's: Vis's
    own modules import Vis's; no one imports the native modules (the standard library's own
    use, e.g. ``multiprocessing.util``, would start processes without an audit event)."""
    if any(name == m or name.startswith(m + ".") for m in NATIVE_ONLY):
        return False
    return _is_vis(str(globals.get("__name__", "")))


def _refused(name: str, fromlist: Sequence[str] | None = None) -> bool:
    """Whether a block may not import ``name`` (``from name import fromlist``)."""
    if any(name == m or name.startswith(m + ".") for m in NATIVE_ONLY):
        return True
    if not _is_vis(name):
        return False
    if any(name == p or name.startswith(p + ".") for p in PUBLIC_SDK):
        return False
    if name in ("vis_core", *SDK_PARENTS) and fromlist:
        return any(f"{name}.{item}" not in (*PUBLIC_SDK, *SDK_PARENTS) for item in fromlist)
    return name not in SDK_PARENTS


def _refusal(name: str) -> str:
    if _is_vis(name):
        return IMPORT_REFUSED.format(name=name)
    return NATIVE_REFUSED.format(name=name)


def _importer(frame: FrameType | None) -> dict[str, Any]:
    """The globals of the first frame outside the import machinery."""
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if not name.startswith(("importlib", "_frozen_importlib")) and name != __name__:
            return frame.f_globals
        frame = frame.f_back
    return {}


def _guard_import(original: Callable[..., ModuleType]) -> Callable[..., ModuleType]:
    def guarded(
        name: str,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        if level == 0 and _refused(name, fromlist) and not _trusted(name, globals or {}):
            raise ImportError(_refusal(name), name=name)
        return original(name, globals, locals, fromlist, level)

    return guarded


class _RefuseFinder:
    """``importlib.import_module`` of a refused module not loaded yet, from a block. (A meta
    path finder needs only ``find_spec``; ``importlib.abc`` would cost each child ~5 ms.)"""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if _refused(fullname) and not _trusted(fullname, _importer(sys._getframe(1))):
            raise ImportError(_refusal(fullname), name=fullname)
        return None


def confine() -> None:
    """Install the refusals for the rest of this process (an audit hook cannot be removed)."""
    import subprocess  # loaded now, while it may still import _posixsubprocess

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(SPAWN_REFUSED.format(event="subprocess"))

    subprocess._fork_exec = refused  # type: ignore[attr-defined]  # Popen's own spawn
    for name in NATIVE_ONLY:  # loaded by Vis's own imports: a block must import them again
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, _RefuseFinder())
    builtins.__import__ = _guard_import(builtins.__import__)
    sys.addaudithook(_audit)
