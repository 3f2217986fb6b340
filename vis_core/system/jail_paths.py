"""The folders the person shows read-only in the jail (``jail_read_paths``), and the folders of
their ``PATH`` that the jail hides: toolchains under home (pyenv, nvm, rustup, ~/.local/bin)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vis_core.system.jail_check import SYSTEM_DIRS

# Kernel interfaces and the folders of the host's sockets: nothing in them is ever shown.
KERNEL_AND_SOCKETS = ("/proc", "/sys", "/dev", "/run", "/var/run")
# Shared temporary folders (X11's and ssh-agent's sockets): never shown whole.
SHARED_TEMPORARY = ("/tmp", "/var/tmp")


@dataclass(frozen=True)
class ReadPaths:
    """The folders of a ``jail_read_paths`` value the jail shows, resolved, and one line for
    each entry it leaves out (why)."""

    shown: tuple[Path, ...] = ()
    left_out: tuple[str, ...] = ()


def read_paths(value: str, vis_folders: Iterable[Path]) -> ReadPaths:
    """Parse ``value`` (folders separated by commas; ``~`` is home). An entry is left out when
    it is not an absolute path, does not exist, or would show too much: the root folder, the
    home folder or a folder holding it, a folder holding or inside Vis's own folders
    (``vis_folders``: keys, sessions), a kernel or socket folder or one in it
    (:data:`KERNEL_AND_SOCKETS`), a shared temporary folder (:data:`SHARED_TEMPORARY`)."""
    home = Path.home().resolve()
    own = [Path(f).resolve() for f in vis_folders]
    kernel = [Path(p).resolve() for p in KERNEL_AND_SOCKETS]
    shared = [Path(p).resolve() for p in SHARED_TEMPORARY]
    shown: list[Path] = []
    left_out: list[str] = []
    for entry in (part.strip() for part in value.split(",")):
        if not entry:
            continue
        expanded = Path(os.path.expanduser(entry))
        if not expanded.is_absolute():
            left_out.append(f"{entry}: not an absolute path (start it with / or ~/)")
            continue
        try:
            path = expanded.resolve(strict=True)
        except (OSError, RuntimeError):
            left_out.append(f"{entry}: does not exist")
            continue
        if not path.is_dir():
            left_out.append(f"{entry}: not a folder")
        elif path == home or path in home.parents:
            left_out.append(f"{entry}: would show your whole home folder; name its toolchains")
        elif any(path == f or f in path.parents or path in f.parents for f in own):
            left_out.append(f"{entry}: holds or lies in Vis's own folders (keys, sessions)")
        elif any(path == f or f in path.parents or path in f.parents for f in kernel):
            left_out.append(f"{entry}: a kernel or socket folder")
        elif any(path == f or path in f.parents for f in shared):
            left_out.append(f"{entry}: a shared temporary folder (other programs' sockets)")
        elif path not in shown:
            shown.append(path)
    return ReadPaths(tuple(shown), tuple(left_out))


def hidden_path_entries(
    environ: Mapping[str, str], workspace: Path, shown: Iterable[Path]
) -> list[Path]:
    """The folders of ``environ``'s ``PATH`` that exist here but that the jail does not show
    (not a system folder, not in the workspace, not in ``shown``): a command found there on
    the host is "not found" in a jailed block."""
    visible = [Path("/" + name) for name in SYSTEM_DIRS]
    visible += [Path(workspace).resolve(), *shown]
    hidden: list[Path] = []
    for entry in environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = Path(entry).resolve()
        if not any(real == v or v in real.parents for v in visible) and Path(entry) not in hidden:
            hidden.append(Path(entry))
    return hidden


def home_relative(path: Path) -> str:
    """``path`` with the home folder written ``~``."""
    home = Path.home()
    return f"~/{path.relative_to(home)}" if home in path.parents else str(path)
