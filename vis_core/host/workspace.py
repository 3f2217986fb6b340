"""The workspace service: its folders, the project's trust and values, and children's limits."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from vis_core.extension_host.environment import project_environment
from vis_core.paths import (
    TrustListError,
    TrustStore,
    VisPaths,
    control_files_changed,
    project_fingerprint,
    trust_command,
    trust_lapsed,
    trusted_again,
)
from vis_core.settings.service import SettingsService
from vis_core.system.git_control import OTHER_AGENTS, GitLooks
from vis_core.system.jail import TOLD_WHEN_MADE, protected_files
from vis_core.system.lifetime import ChildLimits, Confinement
from vis_core.system.nested_gits import NestedGits
from vis_core.welcome import jail_mode, jail_policy, jail_read_paths


def _link_target(path: Path) -> str | None:
    """Where the link ``path`` points; None when it is no longer a link."""
    try:
        return os.readlink(path)
    except OSError:
        return None


_GIT_NAMES = (
    "The git configuration of a repository here names it (include.path or core.hooksPath): "
    "your git reads it as configuration or runs the hooks in it, which can run programs "
    "(core.fsmonitor, hooks). Read it before you run git here, or remove it"
)
_AGENTS_READ = (
    "Other coding agents and editors (Claude Code, Cursor, Gemini CLI, Codex, VS Code) read "
    "it when you open this folder with them, and it can run commands (hooks, MCP servers, "
    "tasks). Read it before you do, or remove it"
)


class Workspace:
    """One workspace of a running Vis: where it is, its project's control files and trust,
    the values the project defines, and what confines the children Vis runs there (with
    ``git_looks``, the git files the jail keeps read-only)."""

    def __init__(self, paths: VisPaths, root: Path, settings: SettingsService) -> None:
        """``settings`` read the project's control files (``settings.snapshot``) and checked
        them against the trust list; trust and project values are answered from them."""
        self.paths = paths
        self.root = root
        self.project_root = settings.project_root
        self.settings = settings
        # the fingerprint of the trusted control files whose change was told (the start's
        # notes say a lapsed trust)
        self._told_changed = (settings.trust_granted or "") if self.trust_changed else None
        # control files that do not exist yet: made during the session, they are told about
        # (the jail cannot reserve a name without leaving an empty file or folder behind)
        code = [".vis/extensions", ".vis/mcp.json", "vis.yml"]  # what loads or configures
        watched = [".git"] if self.trusted else [".git", *code]
        self._absent = {
            folder / name
            for folder in {root, self.project_root}
            for name in watched
            if not os.path.lexists(folder / name)
        }
        self._no_git = {path for path in self._absent if path.name == ".git"}
        # what other programs run that the jail cannot keep read-only before it exists: other
        # agents' settings, and (from the first look for git files) the hooks folders and
        # config files git's configuration names
        self._absent_elsewhere = {
            folder / name: _AGENTS_READ
            for folder in {root, self.project_root}
            for name in TOLD_WHEN_MADE
            if not os.path.lexists(folder / name)
        }
        # links among what the jail keeps read-only: it keeps their targets, never the link
        # itself, so a block can put something else in its place; that is told
        protected = (
            path for folder in {root, self.project_root} for path in protected_files(folder)
        )
        self._links = {path: _link_target(path) for path in protected if os.path.islink(path)}
        # the git files of the workspace, looked for when first needed (see look_for_git)
        self.git_looks = GitLooks()
        self._git_looked = False
        # those in subfolders (nested clones at start, and inside them), other agents' settings
        self._nested_gits = NestedGits(root, enter=True, names=OTHER_AGENTS)
        self._told_full = False  # that the look for them was left incomplete
        self._checking = threading.Lock()

    @property
    def trusted(self) -> bool:
        """Whether the project's control files, as last read, are the ones the person
        trusted (checked at the start and at each ``/reload``)."""
        return self.settings.trusted

    @property
    def trust_changed(self) -> bool:
        """Whether the person trusted the project once, but its control files, as last read
        (at the start, at each ``/reload``), changed since: Vis skipped them."""
        return self.settings.trust_lapsed

    def control_files_notice(self) -> str | None:
        """The notice, said once, that the trusted project's control files changed since
        they were read (the project needs ``vis trust`` again), or that a ``/reload`` skipped
        them for that (or, when the person trusted them again since, that a reload loads
        them); else None."""
        if self.trusted:
            loaded = self.settings.snapshot.fingerprint
            if self._told_changed == loaded or project_fingerprint(self.project_root) == loaded:
                return None
            self._told_changed = loaded
            return control_files_changed(self.project_root)
        granted = self.settings.trust_granted or ""  # "": listed without a fingerprint
        if not self.trust_changed or self._told_changed == granted:
            return None  # the change was told while the files still counted
        self._told_changed = granted
        try:
            again = TrustStore(self.paths).is_trusted(self.project_root)  # `vis trust` since
        except TrustListError:
            again = False
        return (trusted_again if again else trust_lapsed)(self.project_root)

    def look_for_git(self) -> None:
        """Look for the workspace's git files once, before anything of the model's runs here
        (a session holds its first block for it): from then on, a hooks folder or config file
        their configuration names that is not there is told when it appears, and a link among
        them when it is replaced. Not at the start: in a checkout of thousands of folders the
        look takes a while, and a Vis that runs no block needs none."""
        with self._checking:
            self._look_for_git()

    def _look_for_git(self) -> None:
        if self._git_looked:
            return
        control = self.git_looks.control(self.root, look=False)
        self._git_looked = True
        for path in control.absent:
            self._absent_elsewhere.setdefault(path, _GIT_NAMES)
        self._links.update(
            {path: _link_target(path) for path in control.links if os.path.islink(path)}
        )

    def control_notices(self) -> list[str]:
        """The notices of :meth:`control_files_notice` and :meth:`new_control_notices` due now
        (one check at a time: sessions of this workspace may ask at once, from threads)."""
        with self._checking:
            changed = self.control_files_notice()
            return [*([changed] if changed else []), *self.new_control_notices()]

    def new_control_notices(self) -> list[str]:
        """The warnings, said once per path, that a ``.git`` (or, in an untrusted project,
        ``.vis/extensions``, ``.vis/mcp.json`` or ``vis.yml``) appeared since startup in the
        workspace or project folder, or a git repository (a ``.git``, or a folder git takes
        as a bare repository) in the workspace's folders (:class:`NestedGits`, and once that
        it left folders made during the session out), or a hooks folder or config file git's
        configuration names (not there at :meth:`look_for_git`), or another agent's settings
        (``.claude/``, ``.mcp.json``…, in any folder the look knows), that were not there at
        the start: the person's git, another agent, or trusting the project, would run what it
        names. The workspace's
        folders are looked in only once a block came (a repository made before is told then:
        one changed since the start counts)."""
        gits = [path for path in sorted(self._absent) if path.name == ".git"]
        gits = [path for path in gits if os.path.lexists(path)]
        found = self._nested_gits.new() if self._git_looked else []
        gits += [path for path in found if path.name == ".git"]
        agents = [path for path in found if path.name in OTHER_AGENTS]
        bare = [path for path in found if path.name != ".git" and path not in agents]
        for path in agents:  # the workspace's own are among those told below
            self._absent_elsewhere.setdefault(path, _AGENTS_READ)
        said = []
        if gits:
            self._absent.difference_update(gits)
            folders = ", ".join(str(path.parent) for path in gits)
            said.append(
                f"a .git appeared in {folders} during this session (a block or command "
                "created it). git run there reads its .git/config and hooks, which can run "
                "programs (core.fsmonitor, hooks); check them before you run git there, or "
                "remove that .git"
            )
        if bare:
            folders = ", ".join(str(path) for path in bare)
            said.append(
                f"a git repository appeared in {folders} during this session (a block or "
                "command made HEAD, objects/ and refs/ there, which git takes as a "
                "repository). git run there or below reads its config and hooks, which can "
                "run programs (core.fsmonitor, hooks); check them before you run git there, "
                "or remove those files"
            )
        if self._nested_gits.full and not self._told_full:
            self._told_full = True
            said.append(
                f"more than {self._nested_gits.known_limit:,} folders are in {self.root}, "
                "some made during this session: Vis no longer looks in the others for a git "
                "repository made there. Check for one before you run git in a folder a "
                "block made (git rev-parse --git-dir)"
            )
        for path, target in sorted(self._links.items()):
            if _link_target(path) != target:
                del self._links[path]
                said.append(
                    f"{path}, a link to {target} that Vis keeps read-only, was replaced during "
                    "this session (by a block, a command or you): the jail keeps only a link's "
                    "target read-only, never the link. What is there now may be run by your "
                    "git or another agent; read it before you run git here, or put the link back"
                )
        for path in sorted(self._absent_elsewhere):
            if os.path.lexists(path):
                said.append(
                    f"{path} appeared during this session (made by a block, a command or "
                    f"you). {self._absent_elsewhere.pop(path)}"
                )
        if said:
            return said
        for path in sorted(self._absent):
            if not os.path.lexists(path):
                continue
            self._absent.discard(path)
            return [
                f"{path} appeared during this session (made by a block, a command or you). "
                "It loads code or changes settings once the project is trusted: read it "
                f"before you run `{trust_command(self.project_root)}` or trust the project"
            ]
        return []

    def git_on_host(self, session_id: str) -> bool:
        """Whether Vis may run git on the host in the repository of the workspace for
        ``session_id`` (its drafts): not while the jail is on and that ``.git`` was made since
        Vis started. A jail started before it was made lets a block write it, and a block that
        rewrites ``.git/config`` while Vis's git runs gets a driver past its neutral settings."""
        made = any(os.path.lexists(path) for path in self._no_git)
        return not (made and self.jail_policy(session_id)[0])

    def jail_policy(self, session_id: str | None = None) -> tuple[bool, str | None]:
        """Whether the jail is on for ``session_id``, and why nothing may run (fail closed):
        when the ``jail`` setting cannot be read, blocks and shell commands are refused."""
        return jail_policy(self.settings, session_id)

    def jail_mode(self, session_id: str | None = None) -> tuple[bool, str]:
        """Whether blocks and shell commands of ``session_id`` run jailed, and one line that
        says so: the mode, why, and what to install where the jail cannot run."""
        return jail_mode(self.settings, self.root, session_id)

    def child_limits(self, session_id: str | None = None) -> ChildLimits:
        """Memory and process limits of the sandbox and its shells (settings)."""
        return ChildLimits(
            memory_mb=int(self.settings.get("memory_limit", "8192", session_id)),
            processes=int(self.settings.get("process_limit", "4096", session_id)),
        )

    def confinement(self, session_id: str) -> Confinement:
        """What confines the children of session ``session_id`` now (its settings)."""
        jail, refusal = self.jail_policy(session_id)
        home_writable = self.settings.get("jail_home_writable", False, session_id) is True
        shown = jail_read_paths(self.settings, session_id).shown
        return Confinement(jail, refusal, self.child_limits(session_id), home_writable, shown)

    def project_values(self) -> dict[str, str]:
        """The environment the project defines (``environment:``, ``.env``, ``.env.local``);
        empty until the project is trusted."""
        if not self.trusted:
            return {}
        return project_environment(self.project_root, self.settings.snapshot)
