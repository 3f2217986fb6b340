"""Confine a command with bubblewrap: workspace read-write, system read-only, network by proxy."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import stat
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path

from vis_core.paths import hard_link_problem, vis_folders
from vis_core.small_files import small_text
from vis_core.system.child_process import VIS_PACKAGES
from vis_core.system.git_control import OTHER_AGENTS, GitLooks, gitdir_named
from vis_core.system.jail_check import (
    SYSTEM_DIRS,
    JailUnavailable,
    find_bwrap,
    isolation,
    system_binds,
)
from vis_core.system.lifetime import JailTmpfs
from vis_core.system.network_bridge import JAIL_SOCKET_DIR

log = logging.getLogger(__name__)

# What decides whether and how the project's code runs: read-only inside the jail.
PROTECTED_NAMES = (".vis", "vis.yml", ".git", *OTHER_AGENTS)
PROTECTED_PREFIX = ".env"
# bubblewrap can keep a name read-only only once it exists. Vis makes one placeholder, an
# empty ``.vis/`` (:func:`reserve_control_folder`); one for each of these would be litter, and other
# programs read some as a sign (an empty ``.vis`` makes its folder a project root), so one of
# these a block makes is told instead. ``.vscode/`` itself stays writable: its settings and
# launch files are the model's to edit, and VS Code asks before running a folder's tasks.
TOLD_WHEN_MADE = (*OTHER_AGENTS, ".vscode/tasks.json")
# Folders of home that start programs although their names have no dot (~/bin is on PATH).
HOME_READ_ONLY = ("bin",)


def protected_files(folder: Path) -> list[Path]:
    """The project-control files directly in ``folder``: ``.vis/``, ``vis.yml``, ``.env*`` and
    the whole of ``.git`` (config, hooks, index, ``commondir``…: what the person's own git
    reads and runs), with the folder a ``.git`` file names when it lies in ``folder``."""
    found = [folder / name for name in PROTECTED_NAMES if os.path.lexists(folder / name)]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    found += [folder / n for n in names if n.startswith(PROTECTED_PREFIX) and n != ".vis"]
    target = gitdir_named(folder / ".git")
    if target is not None and folder.resolve() in target.parents and target.is_dir():
        found.append(target)
    return found


SMALL_FILE_BYTES = 64 << 10  # a .git file or commondir: a line of text
LINK_SCAN_LIMIT = 2_000  # entries of the protected folders looked at for hard links, per jail


def _checked_for_links(path: Path, limit: int = LINK_SCAN_LIMIT) -> list[Path]:
    """The files of the protected ``path`` whose second name would let a write reach them: the
    file itself, a git folder's ``config`` and hooks, up to ``limit`` entries of another
    folder (``.vis/``, ``.claude/``); links are not followed."""
    if path.is_symlink() or not path.is_dir():
        return [path]
    if (path / "HEAD").is_file():  # a git folder: what the person's own git runs
        hooks = path / "hooks"
        names = sorted(os.listdir(hooks)) if hooks.is_dir() and not hooks.is_symlink() else []
        return [path / "config", *(hooks / n for n in names[:limit])]
    found: list[Path] = []
    for folder, dirs, files in os.walk(path):
        found += [Path(folder) / n for n in files]
        if len(found) + len(dirs) >= limit:
            break
    return found[:limit]


def refuse_hard_links(protected: Sequence[Path]) -> None:
    """Raise :class:`JailUnavailable` when a protected git file (a ``.git``'s config or hooks)
    has another name (a hard link made before the jail: an unpacked archive, a session with
    the jail off): the jail keeps paths read-only, so a write through the other name would
    change what the person's git runs, which nothing else checks. The other control files go
    on: Vis does not load one with another name, and a change through it to the others
    (skills, commands) changes the project's fingerprint, so the trust lapses; a block making
    ``.env.z`` a second name of a file must not stop every later block."""
    for path in protected:
        if path.name != ".git" and (
            path.name in PROTECTED_NAMES or path.name.startswith(PROTECTED_PREFIX)
        ):
            continue  # not a .git, nor the git folder a .git file names
        for file in _checked_for_links(path):
            try:
                info = os.lstat(file)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                raise JailUnavailable(
                    f"{file}: {hard_link_problem(file, info.st_nlink)}, then try again."
                )


def git_dirs_elsewhere(folder: Path) -> list[Path]:
    """The git folders a ``.git`` file in ``folder`` names (a worktree's or submodule's
    ``gitdir`` and a worktree's common folder) that lie outside ``folder``: shown read-only in
    the jail so git works there. Only a gitdir that names ``folder`` back counts (see
    :func:`_names_back`): the ``.git`` file is the checkout's, and ``gitdir: ~/.ssh`` (or
    ``/``, or another repository) would show that folder to the model."""
    gitdir = gitdir_named(folder / ".git")
    if gitdir is None:
        return []
    root = folder.resolve()
    if gitdir == Path("/") or gitdir in root.parents or not _names_back(gitdir, root):
        return []
    found = [gitdir]
    common = (small_text(gitdir / "commondir", SMALL_FILE_BYTES) or "").strip()
    # a worktree's gitdir is <common>/worktrees/<name>: its common folder and nothing else
    if common and (gitdir / common).resolve() == gitdir.parent.parent:
        if gitdir.parent.name == "worktrees":
            found.append(gitdir.parent.parent)
    return [p for p in found if p.is_dir() and root not in p.parents and p != root]


def _names_back(gitdir: Path, root: Path) -> bool:
    """Whether ``gitdir`` belongs to the work tree ``root``, as git made it: a worktree's
    ``gitdir`` file names ``root/.git``, or a submodule's ``core.worktree`` names ``root``.
    A checkout cannot write either outside itself."""
    back = (small_text(gitdir / "gitdir", SMALL_FILE_BYTES) or "").strip()
    if back and (gitdir / back).resolve() == root / ".git":
        return True
    section = ""
    for line in (small_text(gitdir / "config", SMALL_FILE_BYTES) or "").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "worktree":
                return (gitdir / value.strip().strip('"')).resolve() == root
    return False


def is_protected(
    path: Path, workspace: Path, *, home_writable: bool = False, git_looks: GitLooks | None = None
) -> bool:
    """Whether ``path`` (resolved) is or lies in a project-control file of a folder between
    ``workspace`` and ``path`` (any ``.git``), in a hooks folder or config file a repository's
    configuration names (as ``git_looks`` last looked; None: a look of its own), in Vis's
    runtime, or in a dot entry (or ``~/bin``) of the home folder when the workspace holds home
    (unless ``home_writable``): what the jail keeps read-only."""
    root = Path(workspace).resolve()
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    for name in parts:
        if name in PROTECTED_NAMES or name.startswith(PROTECTED_PREFIX):
            return True
    looks = GitLooks() if git_looks is None else git_looks
    if _under(path, looks.control(root, look=False).existing):  # hooks, included config
        return True
    if _under(path, vis_runtime()):  # Vis's own code, e.g. a virtualenv in the workspace
        return True
    home = Path.home().resolve()
    if not home_writable and _holds_home(root, home) and home in path.parents:
        inside = path.relative_to(home).parts
        if inside[0].startswith(".") or inside[0] in HOME_READ_ONLY:
            return True
        return len(inside) == 1 and not path.exists()
    return False


def reserve_control_folder(project_root: Path, home: Path) -> None:
    """An empty ``.vis/`` made at ``project_root`` where there is none, so that the jail binds
    it read-only as it binds one that exists: a jailed block cannot create the folder that
    holds a project's extensions, servers and settings (bubblewrap can only keep a name
    read-only once it exists). Not where the project root is or holds the home folder (home's
    own entries stay read-only there), nor where the folder cannot be written."""
    folder = project_root / PROTECTED_NAMES[0]
    if _holds_home(project_root, home) or os.path.lexists(folder):
        return
    try:
        folder.mkdir()
    except OSError as exc:  # a read-only checkout: nothing can be created there anyway
        log.debug("no .vis placeholder in %s: %s", project_root, exc)


def _holds_home(root: Path, home: Path) -> bool:
    return home != Path("/") and (root == home or root in home.parents)


def home_warning(workspace: Path) -> str | None:
    """What a person should know when ``workspace`` is the home folder or holds it: the model
    works among their own files; the jail keeps home's dot entries read-only."""
    root = Path(workspace).resolve()
    home = Path.home().resolve()
    if not _holds_home(root, home):
        return None
    where = "is your home folder" if root == home else f"holds your home folder ({home})"
    return (
        f"the workspace {root} {where}: blocks and shell commands can change every file in "
        "it. With the jail on, home's dot files and folders (~/.bashrc, ~/.ssh, ~/.config) "
        "and new files directly in home stay read-only; start Vis in a project folder instead"
    )


@functools.cache
def vis_runtime() -> list[Path]:
    """Vis's own runtime: the interpreter's prefixes, their site-packages, and the folders of
    Vis's packages wherever they lie (an editable install's source included)."""
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent}
    for name in VIS_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            found.add(Path(location))
    found.add(Path(__file__).resolve().parents[1])  # vis_core itself
    return sorted({p.resolve() for p in found})


def _under(path: Path, folders: Iterable[Path]) -> bool:
    """Whether ``path`` is or lies in one of ``folders`` (absolute paths, compared as text: a
    jail start asks this of each folder it pins, and ``Path.parents`` makes every parent)."""
    text = str(path)
    return any(text == str(f) or text.startswith(os.path.join(f, "")) for f in folders)


def jail_argv(
    argv: list[str],
    workspace: Path,
    *,
    read_only: Sequence[Path] = (),
    read_write: Sequence[Path] = (),
    project_root: Path | None = None,
    shown_in_vis: Sequence[Path] = (),
    home_writable: bool = False,
    workspace_read_only: bool = False,
    network_folder: Path | None = None,
    tmpfs_bytes: int = 0,
    git_looks: GitLooks | None = None,
) -> list[str]:
    """``argv`` wrapped in bubblewrap.

    Only the system folders (``/usr``, ``/etc``, ``/opt``…) are shown, read-only: nothing else
    of ``/`` (no unix socket under ``/run``, ``/var`` or elsewhere is reachable); ``/tmp``,
    ``/dev/shm`` and the home folder are empty private tmpfs mounts (secrets under home stay
    hidden) that hold together at most ``tmpfs_bytes``, the memory limit (see
    :class:`JailTmpfs`), and ``/dev`` is read-only; ``workspace`` is bound read-write; when
    it holds the home folder, home's own folder and its dot entries stay read-only
    (``~/.bashrc``, ``~/.ssh``, ``~/.config``); ``read_only`` paths and Vis's runtime
    (:func:`vis_runtime`) where it lies in a writable folder are read-only, also where they
    lie inside the workspace; the project-control files (``.vis/``, ``vis.yml``, ``.env*``,
    the whole ``.git``), every repository's git folder in the workspace, the hooks and
    config files their configuration names there and other agents' settings in its
    subfolders (a look of ``git_looks``, the workspace's;
    None: a look of its own, nothing kept) stay read-only; Vis's own folders (VIS_HOME,
    wherever it lies) are replaced by empty tmpfs mounts of 1 MiB, in
    which the ``shown_in_vis`` folders (a session's saved outputs) are shown read-only; then
    ``read_write`` grants are bound read-write. ``workspace_read_only`` (plan mode): the
    workspace, home's entries and the grants are all bound read-only; only the private
    ``/tmp`` and home tmpfs take writes.
    The process has its own user, PID, network, IPC and UTS namespaces, no capability (also
    as root) and a session of its own; it and everything it starts die with its parent.
    Its network namespace holds only loopback; ``network_folder`` (the folder of Vis's
    network proxy socket) is shown read-only at :data:`JAIL_SOCKET_DIR`: its only way out.
    """
    bwrap = find_bwrap()
    root = Path(workspace).resolve()
    if root == Path("/"):
        raise JailUnavailable(
            "the workspace is the root folder /, so the jail could keep nothing outside it "
            "(the system, other homes, sockets, host processes). Start Vis in a project "
            "folder, or turn the jail off (jail = false) to run unconfined."
        )
    home = Path.home().resolve()
    sizes = JailTmpfs.within(tmpfs_bytes)
    args = [bwrap, *system_binds(), "--dev", "/dev", "--size", str(sizes.shm)]
    args += ["--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--proc", "/proc"]
    args += ["--size", str(sizes.tmp), "--tmpfs", "/tmp"]
    visible = [Path("/" + name) for name in SYSTEM_DIRS]
    emptied = [Path("/tmp")]
    # a home folder that does not exist (HOME of a service user) has nothing to keep read-only,
    # and bwrap cannot bind it
    holds_home = _holds_home(root, home) and home.is_dir()
    if not holds_home and home != Path("/") and not _holds_home(root, home):
        args += ["--size", str(sizes.home), "--tmpfs", str(home)]
        emptied.append(home)
    existing = [f.resolve() for f in vis_folders() if f.exists()]
    masked = [f for f in existing if not any(p in f.parents for p in existing)]
    writable = [root, *(Path(p).resolve() for p in read_write)]
    folders = {root} | ({Path(project_root).resolve()} if project_root is not None else set())
    reserve_control_folder(Path(project_root).resolve() if project_root is not None else root, home)
    git_elsewhere = [p for folder in sorted(folders) for p in git_dirs_elsewhere(folder)]
    # Vis's runtime where it lies inside a writable folder (a virtualenv in the workspace)
    inside = [
        p for p in vis_runtime() if _under(p, writable) or any(w in p.parents for w in writable)
    ]
    shown = sorted(
        {
            resolved
            for resolved in (Path(p).resolve() for p in (*inside, *read_only, *git_elsewhere))
            if resolved.exists() and not _under(resolved, masked)
        }
    )
    # a read-only path that holds the workspace goes first, so the workspace shows through it;
    # every other one after the workspace, so it stays read-only inside it too
    holding = [p for p in shown if p == root or p in root.parents]
    # a workspace inside Vis's own folders (a session's draft): that folder is emptied first,
    # so the workspace shows through it; every other one is emptied after the binds
    masked_holding = [f for f in masked if f == root or f in root.parents]
    for folder in masked_holding:
        args += ["--size", str(sizes.vis), "--tmpfs", str(folder)]
    for path in holding:
        args += ["--ro-bind", str(path), str(path)]
    bind = "--ro-bind" if workspace_read_only else "--bind"
    args += [bind, str(root), str(root)]
    home_bound = holds_home and not home_writable and not workspace_read_only
    if home_bound:
        args += ["--ro-bind", str(home), str(home)]  # the person may allow them
        args += [arg for entry in _home_entries(home) for arg in ("--bind", entry, entry)]
    protected = {folder: protected_files(folder) for folder in sorted(folders)}
    # every other repository of the workspace, the hooks and config files git takes there, and
    # other agents' settings in its subfolders
    git_looks = GitLooks() if git_looks is None else git_looks
    control = git_looks.control(root)
    protected[root] = [*protected.get(root, []), *control.existing, *control.agents]
    if not control.complete:
        log.warning(
            "%s holds more folders than one look for git repositories lists: a repository "
            "or another agent's settings in a folder not looked in yet stay writable in "
            "this jail",
            root,
        )
    # the folders on the way to a protected path (a .git file's gitdir in a subfolder) are
    # pinned too: a block running meanwhile cannot swap one for a link before bwrap binds it
    guarded = [path.resolve() for paths in protected.values() for path in paths]
    inner = [*(p for p in shown if p not in holding), *masked, *read_write, *guarded]
    for folder in _pins(root, inner, shown, home if home_bound else None):
        kept = is_protected(folder, root, home_writable=home_writable, git_looks=git_looks)
        mode = kept or workspace_read_only
        args += ["--ro-bind" if mode else "--bind", str(folder), str(folder)]
    if holds_home:
        # a socket accepts connections on a read-only mount too (Docker Desktop's, an ssh
        # ControlMaster's, gpg-agent's): each one among home's dot entries is covered
        args += [arg for sock in home_sockets(home) for arg in ("--ro-bind", "/dev/null", sock)]
    for path in shown:
        if path not in holding:
            args += ["--ro-bind", str(path), str(path)]
    for paths in protected.values():
        refuse_hard_links(paths)
        for path in paths:
            real = path.resolve()
            if _under(real, folders):  # a link elsewhere points at read-only ground already
                args += ["--ro-bind", str(real), str(real)]
    for folder in masked:
        if folder not in masked_holding:
            args += ["--size", str(sizes.vis), "--tmpfs", str(folder)]
    for path in shown_in_vis:  # e.g. the session's own saved outputs, read-only
        resolved = Path(path).resolve()
        if resolved.is_dir():
            args += ["--ro-bind", str(resolved), str(resolved)]
    bound = [root, *shown]
    for path in read_write:
        resolved = Path(path).resolve()
        args += [bind, str(resolved), str(resolved)]
        bound.append(resolved)
    # A grant that names a link (~/.sdkman/candidates/java/current): the binds above hold its
    # target; the links on the way are made again where the jail does not show them.
    made: set[Path] = set()
    for path in (*read_only, *read_write):
        for target, link in symlinks_on(Path(path)):
            hidden = not _under(link, visible) or _under(link, emptied)
            if hidden and not _under(link, bound) and link not in made:
                if not _under(link, masked):
                    args += ["--symlink", target, str(link)]
                    made.add(link)
    if network_folder is not None:  # a socket accepts connections on a read-only mount
        args += ["--ro-bind", str(Path(network_folder).resolve()), JAIL_SOCKET_DIR]
    args += ["--remount-ro", "/", *isolation(), "--chdir", str(root), "--", *argv]
    return args


def _pins(
    root: Path, inner: Sequence[Path], shown: Sequence[Path], home: Path | None
) -> list[Path]:
    """The folders of the workspace ``root`` that hold a path bound or masked inside it
    (``inner``: a shown path, Vis's own folders, a ``read_write`` grant), outside every
    ``shown`` path and not holding ``home`` (bound read-only already), shallowest first:
    each is bound onto itself, and a mount point cannot be renamed. Otherwise a block could
    move such a folder away: the next jail would bind a link to a hidden host folder left in
    its place (the folder the person shows read-only with ``jail_read_paths``, Vis's runtime
    in a virtualenv of the workspace), or find no VIS_HOME to mask and show it under the new
    name (Vis started in home with ``jail_home_writable``)."""
    paths = [Path(p).resolve() for p in inner]
    return sorted(
        {
            folder
            for path in paths
            if root in path.parents
            for folder in path.parents
            if root in folder.parents
            and not _under(folder, shown)
            and not (home is not None and _under(home, [folder]))
        },
        key=lambda folder: len(folder.parts),
    )


SOCKET_SCAN_LIMIT = 20_000  # entries of home's dot folders looked at for sockets, per jail


def home_sockets(home: Path, limit: int = SOCKET_SCAN_LIMIT) -> list[str]:
    """The unix sockets among home's dot entries and ``~/bin``, shallowest first, looking at
    up to ``limit`` entries (links are not followed): what the jail covers when the
    workspace holds home."""
    found: list[str] = []
    pending = deque([str(home)])
    seen = 0
    while pending and seen < limit:
        folder = pending.popleft()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if folder == str(home) and not (
                entry.name.startswith(".") or entry.name in HOME_READ_ONLY
            ):
                continue  # home's other entries are bound read-write, as a workspace is
            try:
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                    found.append(entry.path)
            except OSError:
                continue
    return sorted(found)


def _home_entries(home: Path) -> list[str]:
    """The entries of the home folder that stay writable when the workspace holds home: the
    folders and files that are not dot entries nor ``~/bin`` (no link: its target follows its
    own rules)."""
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return []
    return [
        str(home / n)
        for n in names
        if not n.startswith(".") and n not in HOME_READ_ONLY and not (home / n).is_symlink()
    ]


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
        "no shell commands until this is fixed. Fix that value where it is set (Vis did not "
        "change it); the next request reads it again."
    )
