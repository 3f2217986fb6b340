"""Confine a command with bubblewrap: the workspace read-write, the system read-only, no network."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

INSTALL_HINT = (
    "bubblewrap (`bwrap`) is not installed or not on PATH, so Vis cannot confine this process "
    "and will not run it unconfined. Install it with `apt-get install bubblewrap` "
    "(Debian/Ubuntu), `dnf install bubblewrap` (Fedora/RHEL) or your distribution's "
    "bubblewrap package, or turn the jail off."
)


class JailUnavailable(RuntimeError):
    """The jail was asked for but bubblewrap is missing."""


def find_bwrap() -> str:
    """The path of ``bwrap``, or :class:`JailUnavailable` with install instructions."""
    found = shutil.which("bwrap")
    if not found:
        raise JailUnavailable(INSTALL_HINT)
    return found


def jail_argv(
    argv: list[str],
    workspace: Path,
    *,
    read_only: Sequence[Path] = (),
    read_write: Sequence[Path] = (),
) -> list[str]:
    """``argv`` wrapped in bubblewrap.

    The whole file system is mounted read-only; ``/tmp`` and the home folder are replaced by
    empty private tmpfs mounts (so secrets under home stay hidden); ``read_only`` paths (e.g. a
    Python runtime under home) are shown again read-only; ``workspace`` and ``read_write`` are
    bound read-write; the network is unshared; the process dies with its parent and starts in
    the workspace.
    """
    bwrap = find_bwrap()
    root = Path(workspace).resolve()
    home = Path.home().resolve()
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if root != home and root not in home.parents and home != Path("/"):
        args += ["--tmpfs", str(home)]
    for path in read_only:
        resolved = Path(path).resolve()
        if resolved.exists():
            args += ["--ro-bind", str(resolved), str(resolved)]
    for path in (root, *read_write):
        resolved = Path(path).resolve()
        args += ["--bind", str(resolved), str(resolved)]
    args += ["--unshare-net", "--die-with-parent", "--chdir", str(root), "--", *argv]
    return args
