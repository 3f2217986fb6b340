"""Run git for the model or a tool so that the repository's configuration cannot run commands.

A repository is untrusted input: its ``.git/config`` can name programs git runs on its own
(``core.fsmonitor``, hooks, ``core.pager``, ``diff.external``, textconv and filter drivers,
``core.sshCommand``, ``gpg.program``…). Every git command Vis runs on a workspace goes through
:func:`git_argv`: those keys are switched off on the command line (which wins over every
config file), the system config is skipped, no pager, no network, no prompt; with the jail on
the command also runs inside it, and on the host the model's processes are held still from the
listing of the drivers to switch off until git has run (a file of the workspace the
configuration includes cannot change in between). A submodule is another repository whose
configuration the listing of the outer one cannot see: git runs ``git status`` inside a
submodule to see whether its files changed (with that repository's filter drivers), so no
command Vis runs looks into them, and an extension's ``vis.git`` command that does (``add
-A``, ``describe --dirty``, its own ``--ignore-submodules=none``) has the drivers of each
repository checked out inside switched off too (:func:`nested_overrides`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vis_core.system.environ import child_environment
from vis_core.system.pipe_watch import Stuck, refusal, run_watched
from vis_core.system.programs import host_program
from vis_core.system.quiet import NotQuiet, model_stopped

if TYPE_CHECKING:
    from vis_core.system.git_control import GitLooks

TIMEOUT_SECONDS = 60.0
# Every key that names a program git may start, set to something that starts nothing.
NEUTRAL_CONFIG = (
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "pager.status=false",
    "pager.diff=false",
    "pager.log=false",
    "pager.blame=false",
    "diff.external=",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.askPass=",
    "core.editor=false",
    "sequence.editor=false",
    "core.alternateRefsCommand=",
    "credential.helper=",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "log.showSignature=false",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
    "core.quotePath=false",
    "color.ui=never",
    # a submodule's own config may name drivers: git never runs git inside one for Vis
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
)
# Driver keys whose names the repository chooses: each one found is switched off too (git
# runs a driver with an empty name: ``[filter ""]`` with ``* filter=`` in .gitattributes).
_DRIVER_KEY = re.compile(
    r"^(filter\.[^\n]*\.(clean|smudge|process)|diff\.[^\n]*\.(textconv|command)"
    r"|merge\.[^\n]*\.driver|credential\.[^\n]*\.helper)$",
    re.IGNORECASE,
)
_DRIVER_VALUE = {"clean": "cat", "smudge": "cat", "textconv": "cat"}
_NEUTRAL_ARGS = tuple(part for pair in NEUTRAL_CONFIG for part in ("-c", pair))
# Environment names that make git run a program or read other config; never passed on.
_DROPPED_ENV = re.compile(
    r"^(GIT_(EXTERNAL_DIFF|SSH|SSH_COMMAND|ASKPASS|PROXY_COMMAND|EDITOR|SEQUENCE_EDITOR|"
    r"CONFIG|CONFIG_.*|DIR|WORK_TREE|EXEC_PATH|TRACE.*)|SSH_ASKPASS|PAGER)$"
)
DUBIOUS_OWNERSHIP = (
    "git refuses this repository because another user owns it (git's safe.directory check). "
    "Vis does not override that check: a repository owned by someone else can run commands "
    "through its configuration. Run `git config --global --add safe.directory PATH` yourself "
    "if you trust it."
)


class GitFailed(RuntimeError):
    """git could not run, or refused; the message says what git said (``vis.git``)."""


MAX_NESTED = 64  # repositories inside one whose drivers a vis.git command switches off
MAX_LISTED = 300_000  # files a listing takes at most (about a second): past it, none is taken
MAX_LISTED_BYTES = 64 << 20  # of the paths a bounded listing holds (220 bytes a file at 300,000)


def too_many(most: int = MAX_LISTED) -> str:
    """What a folder too big to list holds, as a message says it."""
    return f"more than {most:,} files or {MAX_LISTED_BYTES >> 20} MiB of file names"


class TooMany(Exception):
    """A listing passed its bound of entries or of bytes: it was stopped there."""


class Entries:
    """The NUL-ended entries of git's ``-z`` output, taken as it comes (:meth:`take`, the
    ``take`` of :func:`run_git`): :class:`TooMany` past ``most`` entries or ``most_bytes``
    bytes, which stops git, so a listing holds no more than that whatever the repository
    holds (a crafted index names millions of long paths at little cost). None: no bound.
    ``keep``: which entries are kept (and counted); default all."""

    def __init__(
        self,
        most: int | None = None,
        most_bytes: int | None = None,
        keep: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.most, self.most_bytes, self.keep = most, most_bytes, keep
        self.items: list[bytes] = []
        self._bytes = 0
        self._rest = bytearray()  # an entry whose end has not come yet

    def take(self, chunk: bytes) -> None:
        self._bytes += len(chunk)
        if self.most_bytes is not None and self._bytes > self.most_bytes:
            raise TooMany(f"more than {self.most_bytes:,} bytes")
        end = chunk.rfind(b"\0")  # found in the chunk only: a long entry is not searched again
        self._rest += chunk
        if end >= 0:
            cut = len(self._rest) - len(chunk) + end
            found = bytes(self._rest[:cut]).split(b"\0")
            self.items += found if self.keep is None else filter(self.keep, found)
            del self._rest[: cut + 1]
        if self.most is not None and len(self.items) > self.most:
            raise TooMany(f"more than {self.most:,} entries")


def git_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A minimal environment for git: no system config, no pager, no prompt, no locks."""
    env = {k: v for k, v in child_environment().items() if not _DROPPED_ENV.match(k)}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
    )
    env.update(extra or {})
    return env


def git_program(cwd: Path) -> str:
    """The absolute path of git, found outside ``cwd``: a checkout's ``./git`` never runs,
    whatever ``PATH`` holds. Raises :class:`GitFailed` when there is none."""
    found = host_program("git", (cwd,))
    if found is None:
        raise GitFailed("git is not on PATH; install git to use these tools")
    return found


def driver_overrides(cwd: Path, place: Sequence[str] = ()) -> list[str]:
    """``-c`` pairs that switch off every filter/diff/merge driver the config files name
    where git runs in ``cwd`` with its options ``place`` (:func:`_parsed`);
    :class:`GitFailed` for a driver whose name holds ``=`` (``-c`` ends the name at the first
    one, so no pair could switch it off)."""
    try:
        done = run_watched(
            [git_program(cwd), *place, "config", "--list", "--name-only", "-z"],
            cwd=cwd,
            timeout=TIMEOUT_SECONDS,
            env=git_environment(),
        )
    except Stuck as exc:
        raise GitFailed(refusal("git config", exc)) from None
    except (OSError, subprocess.TimeoutExpired, GitFailed):
        return []
    pairs: list[str] = []
    # a name's bytes as they are (not UTF-8: ``[filter "\xff"]``), which the ``-c`` pair
    # gives back to git unchanged: a replaced byte would switch off another driver
    for name in os.fsdecode(done.stdout).split("\0"):
        match = _DRIVER_KEY.match(name.strip())
        if match and "=" in name:
            where = f"{cwd} ({shlex.join(place)})" if place else cwd
            raise GitFailed(
                f"the git configuration of {where} names a driver, {name.strip()!r}, that Vis "
                "cannot switch off ('=' in its name), so Vis runs no git command there; "
                "rename it in the configuration file that sets it"
            )
        if match:
            kind = name.rsplit(".", 1)[-1].lower()
            pairs += ["-c", f"{name.strip()}={_DRIVER_VALUE.get(kind, '')}"]
    return pairs


def nested_overrides(cwd: Path, place: Sequence[str] = ()) -> list[str]:
    """``-c`` pairs that switch off the drivers of every repository checked out at a gitlink
    of the index (a submodule, or a repository added as one) where git runs in ``cwd``, and
    within those, as deep as they go: git passes its ``-c`` pairs on to the ``git status``
    it runs inside one. :class:`GitFailed` past :data:`MAX_NESTED` of them, or an index too
    big to look through."""
    pairs: list[str] = []
    seen: set[Path] = set()  # tops looked through (a link back to one names it again)
    todo, found = [(cwd, list(place))], 0
    while todo:
        folder, where = todo.pop()
        top = _toplevel(folder, where)
        if top is None or top in seen:
            continue
        seen.add(top)
        inside = [inner for inner in _gitlinks(top) if (inner / ".git").exists()]
        found += len(inside)
        if found > MAX_NESTED:
            raise GitFailed(
                f"{cwd} holds more than {MAX_NESTED} repositories inside it; Vis runs no git "
                "command there that could look into them"
            )
        for inner in inside:
            pairs += driver_overrides(inner)
            todo.append((inner, []))
    return pairs


def _toplevel(folder: Path, place: Sequence[str]) -> Path | None:
    """The top of the working tree git runs in from ``folder`` with ``place``; None: none."""
    done = _plain_git(folder, [*place, "rev-parse", "--show-toplevel"])
    top = os.fsdecode(done.stdout).rstrip("\n")
    return Path(top) if done.returncode == 0 and top else None


def _gitlinks(top: Path) -> list[Path]:
    """The folders the index of the repository at ``top`` records as gitlinks (the index is
    read whole, its other entries dropped as they come)."""
    entries = Entries(MAX_LISTED, keep=lambda entry: entry.startswith(b"160000 "))
    try:
        _plain_git(top, ["ls-files", "--stage", "-z"], take=entries.take)
    except TooMany:
        raise GitFailed(f"the index of {top} records more than {MAX_LISTED:,} gitlinks") from None
    links = (item.split(b"\t", 1) for item in entries.items)
    return [top / os.fsdecode(pair[1]) for pair in links if len(pair) == 2]


def _plain_git(
    cwd: Path, args: Sequence[str], take: Callable[[bytes], None] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git args`` that starts no driver, with the programs git may start switched off."""
    try:
        return run_watched(
            [git_program(cwd), "--no-pager", *_NEUTRAL_ARGS, *args],
            cwd=cwd,
            timeout=TIMEOUT_SECONDS,
            env=git_environment(),
            take=take,
        )
    except Stuck as exc:
        raise GitFailed(refusal(f"git {args[-1]}", exc)) from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitFailed(f"git could not look into {cwd}: {exc}") from None


# git's own options that take a value, before the command (also as the next argument)
_VALUED = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--config-env",
        "--attr-source",
        "--super-prefix",
    }
)
# git's own options that send it to another repository or working tree than its folder's
_PLACE = frozenset({"-C", "--git-dir", "--work-tree", "--bare"})


# the commands that compare the working tree, and so look into submodules unless told not to
_WORKTREE_DIFFS = frozenset({"diff", "diff-files", "diff-index", "status"})
# Commands that neither read a file of the working tree nor write the index (writing it, git
# compares each racily clean entry with its file through the clean filter: ``write-tree``),
# compare contents, merge or fetch, so no filter, diff or merge driver nor credential helper
# can start: they need no listing of the drivers to switch off (one git process fewer each;
# ``worktree`` and ``cat-file`` only as :func:`_starts_no_driver` allows). Not ``rev-parse``:
# it is how Vis asks whether it runs git in a folder at all (``git_toplevel``, a draft's
# backend), and a repository naming a driver no ``-c`` can switch off stays one it runs no
# git in (:func:`driver_overrides`).
_NO_DRIVERS = frozenset(
    {
        "cat-file",
        "check-ignore",
        "commit-tree",
        "config",
        "for-each-ref",
        "ls-tree",
        "merge-base",
        "show-ref",
        "symbolic-ref",
        "update-ref",
        "worktree",
    }
)
_CONVERTING = ("--filters", "--textconv", "--path")  # cat-file: blobs through the drivers


def _parsed(args: Sequence[str]) -> tuple[int, list[str]]:
    """Where git's command is in ``args`` (after git's own options; ``len(args)``: none), and
    those of git's own options that choose the repository and working tree it runs in
    (``-C``, ``--git-dir``, ``--work-tree``, ``--bare``), as given and in their order."""
    index, place = 0, []
    while index < len(args) and args[index].startswith("-"):
        width = 2 if args[index] in _VALUED else 1
        if args[index].split("=", 1)[0] in _PLACE:
            place += args[index : index + width]
        index += width
    return index, place


def _starts_no_driver(command: str, rest: Sequence[str]) -> bool:
    """Whether git's ``command`` with ``rest`` cannot start a driver, whatever the
    configuration names: a command of :data:`_NO_DRIVERS`, a worktree only listed or pruned
    (``add`` checks files out, ``remove`` compares them), a ``cat-file`` not asked to
    convert."""
    if command == "worktree":
        return bool(rest) and rest[0] in ("list", "prune")
    if command == "cat-file":
        return not any(arg.startswith(_CONVERTING) for arg in rest)
    return command in _NO_DRIVERS


def _guards(command: str) -> list[str]:
    """What goes after a ``command`` that compares the working tree: ``--ignore-submodules=all``
    (``git diff-files`` and ``git diff-index`` do not read ``diff.ignoreSubmodules``, and
    would run ``git status`` in each submodule). A ``diff`` also gets ``--no-ext-diff``:
    ``diff.external`` is switched off as empty, which ``git diff`` would otherwise try to run
    (and fail: "external diff died"); other commands run one only when asked."""
    if command not in _WORKTREE_DIFFS:
        return []
    return ["--ignore-submodules=all", *(["--no-ext-diff"] if command == "diff" else [])]


def git_argv(
    args: Sequence[str],
    cwd: Path,
    *,
    jail_workspace: Path | None = None,
    project_root: Path | None = None,
    git_looks: GitLooks | None = None,
    nested: bool = False,
) -> list[str]:
    """``git args`` with every program-starting key switched off; jailed with a workspace
    (``git_looks``: its looks for git files, see :func:`~vis_core.system.jail.jail_argv`).
    ``nested``: on the host, the drivers of the repositories inside are switched off too
    (:func:`nested_overrides`), for a command Vis does not choose (``vis.git``)."""
    argv = [git_program(cwd), "--no-pager", *_NEUTRAL_ARGS]
    at, place = _parsed(args)
    command = args[at] if at < len(args) else ""
    if not _starts_no_driver(command, args[at + 1 :]):
        argv += driver_overrides(cwd, place)  # where git will run
        if nested and jail_workspace is None:
            argv += nested_overrides(cwd, place)
    if jail_workspace is not None:
        argv += ["-C", str(cwd)]
    argv += [*args[: at + 1], *_guards(command), *args[at + 1 :]]
    if jail_workspace is None:
        return argv
    from vis_core.system.jail import jail_argv  # here: vis.GitFailed is imported without it

    return jail_argv(argv, jail_workspace, project_root=project_root, git_looks=git_looks)


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    jail_workspace: Path | None = None,
    project_root: Path | None = None,
    git_looks: GitLooks | None = None,
    timeout: float = TIMEOUT_SECONDS,
    feed: bytes | None = None,
    environment: dict[str, str] | None = None,
    take: Callable[[bytes], None] | None = None,
    nested: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run git safely (see :func:`git_argv`, and its ``nested``) with ``feed`` on its input
    (else none) and ``environment`` added to git's own; raises :class:`GitFailed` when it
    cannot start.
    ``take``: given git's output as it comes, not kept (see :func:`run_watched`)."""
    env = git_environment(environment)
    # on the host, the model's processes are held from the listing of the drivers to switch
    # off until git has run: a config file git includes from the workspace, swapped between
    # the two, named a driver the listing missed, which git then ran outside the jail
    held = model_stopped() if jail_workspace is None else contextlib.nullcontext()
    try:
        with held:
            argv = git_argv(
                args,
                cwd,
                jail_workspace=jail_workspace,
                project_root=project_root,
                git_looks=git_looks,
                nested=nested,
            )
            done = run_watched(argv, cwd=cwd, timeout=timeout, env=env, feed=feed, take=take)
    except NotQuiet as exc:
        raise GitFailed(f"git {args[0]} did not run: {exc}") from None
    except FileNotFoundError as exc:
        if not cwd.is_dir():  # git was found (git_argv): the folder it runs in is missing
            raise GitFailed(f"git cannot run in {cwd}: that folder is gone") from None
        raise GitFailed("git is not on PATH; install git to use these tools") from exc
    except Stuck as exc:
        raise GitFailed(refusal(f"git {args[0]}", exc)) from None
    except subprocess.TimeoutExpired as exc:
        raise GitFailed(f"git {args[0]} did not finish within {timeout:g} seconds") from exc
    if done.returncode != 0 and b"dubious ownership" in done.stderr:
        raise GitFailed(f"{DUBIOUS_OWNERSHIP} ({cwd})")
    return done
