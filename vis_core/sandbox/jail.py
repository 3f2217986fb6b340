"""Confine a command with bubblewrap: the workspace read-write, the system read-only, no network."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

INSTALL_HINT = (
    "bubblewrap (`bwrap`) is not installed or not on PATH, so Vis cannot confine this process "
    "and will not run it unconfined. Install it with `apt-get install bubblewrap` "
    "(Debian/Ubuntu), `dnf install bubblewrap` (Fedora/RHEL) or your distribution's "
    "bubblewrap package, or turn the jail off."
)
# What decides whether and how the project's code runs: read-only inside the jail.
PROTECTED_NAMES = (".vis", "vis.yml")
PROTECTED_PREFIX = ".env"
# Git files whose content makes the person's own git run commands later.
GIT_PROTECTED = ("config", "hooks", "info")


class JailUnavailable(RuntimeError):
    """The jail was asked for but bubblewrap is missing."""


def find_bwrap() -> str:
    """The path of ``bwrap``, or :class:`JailUnavailable` with install instructions."""
    found = shutil.which("bwrap")
    if not found:
        raise JailUnavailable(INSTALL_HINT)
    return found


def protected_files(folder: Path) -> list[Path]:
    """The project-control files directly in ``folder``: ``.vis/``, ``vis.yml``, ``.env*``."""
    found = [folder / name for name in PROTECTED_NAMES if (folder / name).exists()]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    found += [folder / n for n in names if n.startswith(PROTECTED_PREFIX) and n != ".vis"]
    git = folder / ".git"
    if git.is_dir():
        found += [git / name for name in GIT_PROTECTED if (git / name).exists()]
    return found


def is_protected(path: Path, workspace: Path) -> bool:
    """Whether ``path`` (resolved) is or lies in a project-control file of a folder between
    ``workspace`` and ``path``: what the jail keeps read-only."""
    root = Path(workspace).resolve()
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    for index, name in enumerate(parts):
        if name in PROTECTED_NAMES or name.startswith(PROTECTED_PREFIX):
            return True
        if name == ".git" and index + 1 < len(parts) and parts[index + 1] in GIT_PROTECTED:
            return True
    return False


def vis_folders(environ: dict[str, str] | None = None) -> list[Path]:
    """Every folder Vis keeps its own files in (VIS_HOME or the platform folders)."""
    from vis_core.paths import VisPaths

    paths = VisPaths.from_env(environ)
    return sorted({paths.config_dir, paths.data_dir, paths.log_dir})


def _under(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def jail_argv(
    argv: list[str],
    workspace: Path,
    *,
    read_only: Sequence[Path] = (),
    read_write: Sequence[Path] = (),
    project_root: Path | None = None,
    own_pids: bool = False,
) -> list[str]:
    """``argv`` wrapped in bubblewrap.

    The whole file system is mounted read-only; ``/tmp`` and the home folder are replaced by
    empty private tmpfs mounts (so secrets under home stay hidden); ``read_only`` paths (e.g. a
    Python runtime under home) are shown again read-only; ``workspace`` is bound read-write,
    except the project-control files in it (``.vis/``, ``vis.yml``, ``.env*``, ``.git/config``
    and hooks), which stay read-only; Vis's own folders (VIS_HOME, wherever it lies) are
    replaced by empty tmpfs mounts; then ``read_write`` grants are bound read-write; the
    network is unshared; the process dies with its parent and starts in the workspace.
    ``own_pids``: a PID namespace of its own, so every process in it dies with it.
    """
    bwrap = find_bwrap()
    root = Path(workspace).resolve()
    home = Path.home().resolve()
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    emptied = [Path("/tmp")]
    if root != home and root not in home.parents and home != Path("/"):
        args += ["--tmpfs", str(home)]
        emptied.append(home)
    existing = [f.resolve() for f in vis_folders() if f.exists()]
    masked = [f for f in existing if not any(p in f.parents for p in existing)]
    bound = [root]
    for path in read_only:
        resolved = Path(path).resolve()
        if resolved.exists() and not _under(resolved, masked):
            args += ["--ro-bind", str(resolved), str(resolved)]
            bound.append(resolved)
    args += ["--bind", str(root), str(root)]
    folders = {root} | ({Path(project_root).resolve()} if project_root is not None else set())
    for folder in sorted(folders):
        for path in protected_files(folder):
            real = path.resolve()
            if _under(real, folders):  # a link elsewhere points at read-only ground already
                args += ["--ro-bind", str(real), str(real)]
    for folder in masked:
        args += ["--tmpfs", str(folder)]
    for path in read_write:
        resolved = Path(path).resolve()
        args += ["--bind", str(resolved), str(resolved)]
        bound.append(resolved)
    # A grant that names a link (~/.sdkman/candidates/java/current): the binds above hold its
    # target; the links on the way are made again where an emptied folder hides them.
    made: set[Path] = set()
    for path in (*read_only, *read_write):
        for target, link in symlinks_on(Path(path)):
            hidden = _under(link, emptied) and not _under(link, bound)
            if hidden and link not in made and not _under(link, masked):
                args += ["--symlink", target, str(link)]
                made.add(link)
    args += ["--unshare-net", "--die-with-parent", "--chdir", str(root)]
    if own_pids:
        args.append("--unshare-pid")
    args += ["--", *argv]
    return args


def symlinks_on(path: Path) -> list[tuple[str, Path]]:
    """Every symbolic link met while resolving ``path``, as ``(link text, link path)``, in the
    order they are followed (a link's parent folders hold no links themselves)."""
    found: list[tuple[str, Path]] = []
    pending = list(Path(os.path.normpath(os.path.abspath(path))).parts[1:])
    current = Path("/")
    while pending and len(found) < MAX_LINKS:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        step = current / part
        if not step.is_symlink():
            current = step
            continue
        try:
            text = os.readlink(step)
        except OSError:
            break
        found.append((text, step))
        target = Path(text)
        if target.is_absolute():
            current = Path("/")
        pending = [*target.parts[1 if target.is_absolute() else 0 :], *pending]
    return found


MAX_LINKS = 40  # as the kernel's limit on links followed in one lookup


def jail_refusal(problem: str) -> str:
    """Why no block or shell command runs while the ``jail`` setting is unknown (fail closed)."""
    return (
        f"Vis cannot tell whether the jail is on ({problem}), so it runs no code blocks and "
        "no shell commands until this is fixed. Fix the file named above (Vis did not change "
        "it), then start Vis again; `vis doctor` checks it."
    )
