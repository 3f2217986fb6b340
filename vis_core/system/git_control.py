"""What of a workspace the person's own git reads or runs: every repository's git folder (a
``.git`` at any depth, the folder a ``.git`` file names, a bare repository) and the hooks
folder and configuration files that configuration names inside the workspace (a husky
``core.hooksPath``, an ``include.path``); and, found by the same look, other agents' settings
in its folders at any depth. The jail keeps those that exist read-only; Vis tells the person
when one that did not exist appears."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vis_core.small_files import small_bytes
from vis_core.system.nested_gits import MAX_GIT_FOLDERS, NestedGits

CONFIG_BYTES = 1 << 20  # a configuration file read; a larger one is not (git's are small)
INCLUDE_DEPTH = 10  # git's own limit on nested includes
# Other agents' settings: skills a trusted project's sessions read (``.agents``, ``.claude``),
# hooks and MCP servers other agents run (``.mcp.json``: Claude Code's servers). The agents
# read them in subfolders too: in the folder they start in (Claude Code's settings and
# ``.mcp.json``, Gemini CLI's settings), in each folder from the repository's top down to it
# (Codex's ``.codex/`` and ``.agents/skills``), or in the folder of the files they work on
# (Claude Code's ``.claude/skills``, Cursor's ``.cursor/rules``).
OTHER_AGENTS = (".agents", ".claude", ".cursor", ".gemini", ".codex", ".mcp.json")
KEPT_LOOKS = 4  # workspaces (a session's drafts too) whose look is kept
GITFILE_BYTES = 64 << 10
# the hooks git runs, for a core.hooksPath that is the workspace itself (never bound whole)
HOOK_NAMES = (
    "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit "
    "prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push "
    "pre-receive update proc-receive post-receive post-update reference-transaction "
    "push-to-checkout pre-auto-gc post-rewrite sendemail-validate fsmonitor-watchman "
    "p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit post-index-change"
).split()


@dataclass(frozen=True)
class GitControl:
    """The git files of a workspace: ``existing`` (kept read-only in the jail), ``absent``
    (named by a configuration, not there: a block could make them) and whether the look
    for repositories took every folder (``complete``; past its bound, a repository deeper
    than the folders looked in keeps a writable ``.git``, and other agents' settings there
    stay writable); ``agents``: other agents' settings the look found, at any depth."""

    existing: tuple[Path, ...] = ()
    absent: tuple[Path, ...] = ()
    complete: bool = True
    links: tuple[Path, ...] = ()  # names of ``existing`` and ``agents`` that are links
    agents: tuple[Path, ...] = ()


class GitLooks:
    """The looks for the git files of the workspaces one process jails children in (its
    workspace, a session's drafts), kept for the ``kept`` latest: the ``Workspace`` owns one
    and hands it to what builds a jail or refuses a write. No look is taken before one is
    asked for: a Vis that runs no block never walks the workspace."""

    def __init__(self, kept: int = KEPT_LOOKS) -> None:
        self._kept = kept
        self._looks: dict[Path, NestedGits] = {}
        self._last: dict[Path, GitControl] = {}
        self._lock = threading.Lock()

    def control(self, workspace: Path, *, look: bool = True) -> GitControl:
        """The git files of ``workspace`` now; ``look=False``: as the last look found them (a
        host-side write checks it without walking the tree again).

        Repositories are found by one :class:`NestedGits` per workspace: each look lists at
        most ``MAX_GIT_FOLDERS`` folders (changed or new ones first, then the shallowest), and
        a repository found once stays known while it is there, so a block that makes
        thousands of folders cannot push one past the bound of the next jail. The same look
        finds other agents' settings (:data:`OTHER_AGENTS`) in the folders it knows."""
        root = Path(os.path.realpath(workspace))
        with self._lock:
            if not look and root in self._last:
                return self._last[root]
            finder = self._looks.get(root)
            if finder is None:
                while len(self._looks) >= self._kept:
                    self._looks.pop(next(iter(self._looks)))
                finder = self._looks[root] = NestedGits(
                    root, MAX_GIT_FOLDERS, enter=True, names=OTHER_AGENTS
                )
            found = finder.look()
            complete = finder.waiting == 0 and finder.looked_in < finder.known_limit
            control = _control(root, sorted(found), complete, sorted(finder.named()))
            self._last[root] = control
            return control


def _control(root: Path, found: list[Path], complete: bool, agents: list[Path]) -> GitControl:
    existing: set[Path] = set()
    git_dirs: list[tuple[Path, Path]] = []  # (git folder, the top its relative hooks lie in)
    above = _enclosing(root)
    if above is not None:
        git_dirs += _git_dirs(above, root, existing)
    existing.update(found)  # each .git entry, and each bare repository whole
    for entry in found:
        git_dirs += _git_dirs(entry, root, existing) if entry.name == ".git" else [(entry, entry)]
    home = Path.home()
    shared = [_global_config(home), home / ".gitconfig", Path("/etc/gitconfig")]
    named: set[Path] = set()
    hooks: set[Path] = set()
    links: set[Path] = {entry for entry in (*found, *agents) if entry.is_symlink()}
    for git_dir, top in git_dirs:
        files = [git_dir / "config", git_dir / "config.worktree", *_common_config(git_dir)]
        for file in [*files, *shared]:
            _read(file, top, named, hooks, INCLUDE_DEPTH, links)
    absent: set[Path] = set()
    for path in named:
        if _inside(path, root):
            (existing if os.path.lexists(path) else absent).add(path)
    for folder in hooks:
        if folder == root:  # never the whole workspace: the hooks in it
            existing.update(root / n for n in HOOK_NAMES if os.path.lexists(root / n))
        elif _inside(folder, root):
            (existing if os.path.lexists(folder) else absent).add(folder)
            if folder.name == "_" and _inside(folder.parent, root):
                existing.add(folder.parent)  # husky 9: its callers in _/ run the hooks above
    inside = sorted(link for link in links if _inside(link, root))
    return GitControl(
        tuple(sorted(existing)), tuple(sorted(absent)), complete, tuple(inside), tuple(agents)
    )


def _inside(path: Path, root: Path) -> bool:
    return root in path.parents


def _enclosing(root: Path) -> Path | None:
    """The ``.git`` of the repository the workspace lies in (at its top or above it)."""
    for folder in (root, *root.parents):
        if os.path.lexists(folder / ".git"):
            return folder / ".git"
    return None


def gitdir_named(git: Path) -> Path | None:
    """The folder a ``.git`` file names (``gitdir: PATH``, relative to its folder), resolved;
    None when ``git`` is no such file (a folder, a link, anything else)."""
    data = small_bytes(git, GITFILE_BYTES, follow=False)
    text = "" if data is None else data.decode(errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return Path(os.path.realpath(git.parent / text[len("gitdir:") :].strip()))


def _git_dirs(entry: Path, root: Path, existing: set[Path]) -> list[tuple[Path, Path]]:
    """The git folder of the ``.git`` entry ``entry`` with its work tree's top; the folder a
    ``.git`` file names is added to ``existing`` when it lies in the workspace (not holding
    that work tree: a checkout's ``gitdir: ..`` must not make the workspace read-only)."""
    top = entry.parent
    if entry.is_dir() and not entry.is_symlink():
        return [(entry, top)]
    target = gitdir_named(entry)
    if target is None or not target.is_dir():
        return []
    if _inside(target, root) and target != top and target not in top.parents:
        existing.add(target)
    return [(target, top)]


def _common_config(git_dir: Path) -> list[Path]:
    """A worktree's common folder's ``config``, where its ``commondir`` names one."""
    common = (small_bytes(git_dir / "commondir", GITFILE_BYTES) or b"").decode(errors="replace")
    return [git_dir / common.strip() / "config"] if common.strip() else []


def _global_config(home: Path) -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(xdg) / "git" / "config"


def _read(
    file: Path, top: Path, named: set[Path], hooks: set[Path], depth: int, links: set[Path]
) -> None:
    """Add the files ``file`` includes (``include.path``, every ``includeIf.*.path``:
    whether its condition holds or not, it may hold later) to ``named``, and the folders its
    ``core.hooksPath`` values name (relative ones in ``top``) to ``hooks``; the included
    files are read in turn, down to ``depth`` levels. A name that is a link goes to
    ``links``: the jail keeps its target read-only, never the link itself."""
    data = small_bytes(file, CONFIG_BYTES)
    if data is None:
        return
    for section, key, value in config_entries(data.decode(errors="replace")):
        if not value:
            continue
        if key == "path" and section in ("include", "includeif"):
            path = _expanded(value, file.parent, links)
            if path is not None and path not in named:
                named.add(path)
                if depth > 0:
                    _read(path, top, named, hooks, depth - 1, links)
        elif section == "core" and key == "hookspath":
            path = _expanded(value, top, links)
            if path is not None:
                hooks.add(path)


def _expanded(value: str, base: Path, links: set[Path]) -> Path | None:
    """A configuration's path as git takes it: ``~/`` is home, a relative one lies in
    ``base``; resolved (None when it cannot be), its name added to ``links`` when a link."""
    if value.startswith("~"):
        value = os.path.expanduser(value)
    try:
        written = Path(os.path.normpath(base / value))
        if os.path.islink(written):
            links.add(written)
        return Path(os.path.realpath(written))
    except (OSError, ValueError):
        return None


def config_entries(text: str) -> Iterator[tuple[str, str, str]]:
    """``(section, key, value)`` of each entry of a git configuration file, the section and
    key lower-cased (a subsection dropped), the value as git reads it: quotes removed,
    escapes and line continuations taken, a ``#`` or ``;`` comment outside quotes cut.
    A line git would reject is skipped."""
    section = ""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in " \t\r\n":
            i += 1
        elif char in "#;":
            i = _line_end(text, i)
        elif char == "[":
            end = _header_end(text, i)
            if end < 0:
                i = _line_end(text, i)
                continue
            name = text[i + 1 : end].strip().split(None, 1)[0] if text[i + 1 : end].strip() else ""
            section = name.split(".", 1)[0].lower()
            i = end + 1
        elif char.isalpha():
            start = i
            while i < n and (text[i].isalnum() or text[i] == "-"):
                i += 1
            key = text[start:i].lower()
            while i < n and text[i] in " \t":
                i += 1
            if i < n and text[i] == "=":
                value, i = _value(text, i + 1)
                yield section, key, value
            else:
                yield section, key, ""
                i = _line_end(text, i)
        else:
            i = _line_end(text, i)


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _header_end(text: str, i: int) -> int:
    """Where the ``]`` of the section header at ``i`` is (a quoted subsection may hold one),
    or -1 when the line holds none."""
    quoted = False
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if text[j] == "\\" and quoted:
            j += 2
            continue
        if text[j] == '"':
            quoted = not quoted
        elif text[j] == "]" and not quoted:
            return j
        j += 1
    return -1


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


def _value(text: str, i: int) -> tuple[str, int]:
    """The value that starts at ``i`` and where the line after it starts."""
    out: list[str] = []
    quoted = False
    space = ""  # whitespace kept only if more of the value follows
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\n":
            return "".join(out), i + 1
        if char in " \t" and not quoted:
            if out:
                space += char
            i += 1
            continue
        if char in "#;" and not quoted:
            return "".join(out), _line_end(text, i)
        out.append(space)
        space = ""
        if char == '"':
            quoted = not quoted
        elif char == "\\" and i + 1 < n:
            after = text[i + 1]
            if after == "\n":
                i += 2
                continue
            if after == "\r" and text[i + 2 : i + 3] == "\n":
                i += 3
                continue
            out.append(_ESCAPES.get(after, ""))
            i += 1
        elif char != "\r":
            out.append(char)
        i += 1
    return "".join(out), n
