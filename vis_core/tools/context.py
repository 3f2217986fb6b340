"""The per-session state built-in tools share: workspace, output folder, jail, versions, shells."""

from __future__ import annotations

import asyncio
import errno
import os
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vis_core.paths import vis_folders
from vis_core.system.git_control import GitLooks
from vis_core.system.jail import is_protected
from vis_core.system.lifetime import Confinement
from vis_core.system.shell import ShellManager
from vis_core.text_limits import format_size, printable
from vis_core.tools.beneath import Beneath, Escape
from vis_core.tools.display import from_printable
from vis_core.tools.versions import FileVersions

READ_LIMIT = 256 << 20  # bytes of one file a host-side tool (cat, patch, grep) reads at most
# The ``fs_access`` operation of each file tool (op hooks can refuse a path).
FS_OPERATIONS = {
    "cat": "file-read",
    "grep": "file-read",
    "ls": "file-read",
    "patch": "file-write",
    "attach": "file-read",
}


def hidden_folders() -> list[Path]:
    """Vis's own folders, resolved: hidden from tools while the jail is on."""
    return [Path(os.path.realpath(folder)) for folder in vis_folders()]


class FileBuffers(Protocol):
    """An editor's view of files (``vis acp``: the client's ``fs`` methods, unsaved buffers
    included). Called from worker threads, inside :meth:`quiet`, with a path checked there as
    link-free beneath the workspace; ``None`` / ``False``: not through the editor (the tool
    reads or writes disk)."""

    def quiet(self) -> AbstractContextManager[object]:
        """Inside, nothing the model runs can act (a path checked stays as checked until the
        editor has opened it); ``OSError`` when that cannot be had (the tool uses disk)."""
        ...

    def read_text(self, path: Path) -> str | None: ...

    def write_text(self, path: Path, text: str) -> bool: ...


class OutsideWorkspace(PermissionError):
    """A path that leaves the workspace while the jail is on."""


@dataclass(frozen=True)
class ToolContext:
    """One session's tool state; the engine keeps one per session and calls :meth:`close`."""

    workspace: Path
    session_id: str
    output_dir: Path
    jail: bool = False
    versions: FileVersions = field(default_factory=FileVersions)
    shells: ShellManager = field(default_factory=ShellManager)
    # op hooks of the session's extensions (``vis_core.extension_host.tool_hooks.ToolHooks``)
    hooks: Any = None
    # seconds a block may run (0: no limit); work a tool runs in a process of its own ends then
    time_limit: float = 0.0
    home_writable: bool = False  # jail_home_writable: home's dot entries writable in the jail
    # the person's workspace while the session works in a draft (where its .venv lies)
    live_workspace: Path | None = None
    buffers: FileBuffers | None = None  # `vis acp`: cat and patch read and write through the editor
    # the workspace's looks for its git files: what the jail keeps read-only, writes refuse
    git_looks: GitLooks = field(default_factory=GitLooks)

    def __post_init__(self) -> None:
        object.__setattr__(self, "workspace", Path(self.workspace).resolve())
        object.__setattr__(self, "output_dir", Path(self.output_dir))

    def move_to(self, workspace: Path, live: Path | None = None) -> None:
        """The session entered (``live``: the workspace it came from) or left a draft: every
        tool works there from now on."""
        object.__setattr__(self, "workspace", Path(workspace).resolve())
        object.__setattr__(self, "live_workspace", live)

    async def confine(self, now: Confinement) -> None:
        """The settings that confine the session's children changed: the tools check paths,
        and its shells start commands, under them from now on. A jail turned on also kills
        the commands started without it (and what they left running) before this returns."""
        object.__setattr__(self, "jail", now.jail)
        object.__setattr__(self, "home_writable", now.home_writable)
        self.shells.refusal, self.shells.limits = now.refusal, now.limits
        self.shells.home_writable, self.shells.read_paths = now.home_writable, now.read_paths
        if now.jail:
            await self.shells.stop_unjailed()

    def set_time_limit(self, seconds: float) -> None:
        """The ``block_time_limit`` setting changed: a tool's own process keeps to it."""
        object.__setattr__(self, "time_limit", seconds)

    def use_buffers(self, buffers: FileBuffers | None) -> None:
        """``cat`` and ``patch`` read and write through ``buffers`` from now on."""
        object.__setattr__(self, "buffers", buffers)

    def running_commands(self) -> list[str]:
        """The commands of the session that still run, or left something running that does."""
        return [handle.command for handle in self.shells.handles.values() if handle.alive]

    async def stop_commands(self) -> None:
        """Stop every command of the session now (it closes: what they changed is listed)."""
        await self.shells.close_all()

    def in_background(self) -> int:
        """How many commands an ended block left running still run."""
        return len(self.shells.left_running())

    async def background_ended(self) -> None:
        """Return once the commands an ended block left running have ended (none stopped)."""
        await asyncio.gather(*(handle.exit_told() for handle in self.shells.left_running()))

    def buffer_path(self, target: Path) -> Path | None:
        """``target`` as the editor may be given it: absolute, with no link on the way (what
        the checks saw is what the editor opens) and, with the jail on, inside the workspace
        and not hidden; else None (the tool uses disk, beneath the workspace)."""
        if self.buffers is None:
            return None
        real = Path(os.path.realpath(target))
        if real != Path(os.path.normpath(target)):
            return None
        if self.jail and (not self.inside(real) or self.hidden(real)):
            return None
        return real

    def resolve(self, path: str | os.PathLike[str], *, tool: str) -> Path:
        """An absolute path: relative to the workspace, a leading ``@`` stripped, jail-checked."""
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"{tool}: path must be a string, got {type(path).__name__}")
        text = os.fspath(path).strip()
        if text.startswith("@"):
            text = text[1:]
        if not text:
            raise ValueError(f"{tool}: the path is empty; pass a path relative to {self.workspace}")
        if "\0" in text:  # was Python's own "embedded null byte", naming neither
            raise ValueError(f"{tool}: the path {text!r} holds a NUL character, which no path can")
        target = Path(text).expanduser()
        if not target.is_absolute():
            target = self.workspace / target
        if not os.path.lexists(target):  # a name shown with \xNN for bytes that are not UTF-8
            target = Path(from_printable(str(target)))
        target = Path(os.path.normpath(target))
        # cat and ls read the session's saved outputs (the whole text a cut output's note
        # names) beneath that folder, which the jail shows read-only to the block: so through
        # no link (grep runs ripgrep, which would follow one)
        saved = self._in_saved_outputs(target) if self.jail and tool in ("cat", "ls") else None
        if saved is not None:  # read beneath the outputs folder (:meth:`files`)
            target = saved
        elif self.jail and not self.inside(target):
            raise OutsideWorkspace(
                f"{tool}: {text} is outside the workspace {self.workspace}; the jail is on, so "
                "tools reach only files under the workspace. Use a path inside it."
            )
        if self.jail and saved is None:
            self._check_jailed(target, text, tool)
        operation = FS_OPERATIONS.get(tool)
        if self.hooks is not None and operation is not None:
            self.hooks.check_access(operation, str(target))
        return target

    def _check_jailed(self, target: Path, text: str, tool: str) -> None:
        """What the jail hides or keeps read-only, refused to the host-side tools alike."""
        real = Path(os.path.realpath(target))
        if self.hidden(real):
            raise OutsideWorkspace(
                f"{tool}: {text} is inside Vis's own folder (settings, secrets, database); the "
                "jail hides it from the model's tools."
            )
        if FS_OPERATIONS.get(tool) == "file-write" and self.protected(real):
            raise PermissionError(
                f"{tool}: {text} controls how Vis or the person's programs run (.vis/, "
                "vis.yml, .env*, any .git, the hooks and config files git takes from the "
                "workspace, other agents' settings, Vis's own code, home's dot files); the "
                "jail keeps it read-only. Ask the person to change it."
            )

    def _in_saved_outputs(self, target: Path) -> Path | None:
        """``target`` beneath the real folder of the session's saved outputs, if it is there."""
        given, real = Path(os.path.normpath(target)), Path(os.path.realpath(self.output_dir))
        for folder in (Path(os.path.normpath(self.output_dir)), real):
            if given.is_relative_to(folder):
                return real / given.relative_to(folder)
        return None

    def files(self, target: Path | None = None) -> Beneath:
        """Where the tools' reads and writes go, never through a link that leads elsewhere:
        with the jail on, beneath the workspace (Vis's own folders refused), or beneath the
        saved outputs for ``target`` there; off, anywhere."""
        if self.jail and target is not None and self._in_saved_outputs(target) is not None:
            return Beneath(self.output_dir)
        if self.jail:  # a workspace in Vis's data folder (a draft) shows through it
            hidden = (f for f in hidden_folders() if f not in self.workspace.parents)
            return Beneath(self.workspace, tuple(hidden))
        return Beneath(Path("/"))

    def read_bytes(self, target: Path, *, tool: str) -> bytes:
        """The bytes of file ``target`` (from :meth:`resolve`), read beneath the workspace; an
        ``OSError`` that says so for a file above :data:`READ_LIMIT` (a sparse terabyte a
        block made in an instant would be read into Vis's memory), refused unread when its size
        says so."""
        files = self.files(target)
        try:  # beneath: no escape
            over = files.stat(target).st_size > READ_LIMIT
            data = b"" if over else files.read_bytes(target, READ_LIMIT + 1)
        except Escape as exc:
            raise self.escaped(target, exc, tool) from None
        if over or len(data) > READ_LIMIT:
            raise OSError(
                f"{tool}: {self.display(target)} is larger than {format_size(READ_LIMIT)}, more "
                f"than {tool} reads; look into it with grep(), or shell('head -c …') or "
                "shell('tail …')"
            )
        buffers = self.buffers
        if buffers is None:
            return data
        try:
            with buffers.quiet():  # checked and opened while nothing of the model's can act
                place = self.buffer_path(target)
                text = None if place is None else buffers.read_text(place)
        except OSError:
            return data
        return data if text is None else text.encode("utf-8")

    def escaped(self, target: Path, exc: Escape, tool: str) -> OutsideWorkspace:
        """The error of a path that a link (or ``..``) led out of the workspace."""
        if exc.errno == errno.EACCES:  # into Vis's own folder, kept hidden
            return OutsideWorkspace(
                f"{tool}: {self.display(target)} leads into Vis's own folder (settings, secrets, "
                f"database: {exc.strerror}); the jail hides it from the model's tools."
            )
        return OutsideWorkspace(
            f"{tool}: {self.display(target)} leads outside the workspace ({exc.strerror}); the "
            "jail is on, so tools reach only files under the workspace. Use a path inside it."
        )

    def check_writable(self, walked: str, *, tool: str) -> None:
        """Refuse a write to a control file the jail keeps read-only, by the path reached."""
        if self.jail and self.protected(self.workspace / walked):
            raise PermissionError(
                f"{tool}: {walked} controls how Vis runs this project (.vis/, vis.yml, .env*, "
                ".git/config, .git/hooks); the jail keeps it read-only. Ask the person to "
                "change it."
            )

    def protected(self, path: Path) -> bool:
        """Whether the jail keeps ``path`` read-only (:func:`is_protected`)."""
        return is_protected(
            path, self.workspace, home_writable=self.home_writable, git_looks=self.git_looks
        )

    def hidden(self, path: str | os.PathLike[str]) -> bool:
        """Whether the jail is on and ``path`` lies in Vis's own folders (hidden from tools)."""
        if not self.jail:
            return False
        real = Path(os.path.realpath(path))
        inside = self.inside(real)
        return any(
            (real == f or f in real.parents)
            # a workspace in Vis's data folder (a draft) shows through it, as in the jail
            and not (inside and f in self.workspace.parents)
            for f in hidden_folders()
        )

    def inside(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return real == self.workspace or self.workspace in real.parents

    def display(self, path: str | os.PathLike[str]) -> str:
        """How a path is shown to the model: workspace-relative when inside, else absolute."""
        target = Path(path)
        try:
            return printable(target.relative_to(self.workspace).as_posix() or ".")
        except ValueError:
            return printable(target.as_posix())

    async def close(self) -> None:
        """Stop every process this session started (called by the engine at session end)."""
        await self.shells.close_all()
        drain = getattr(self.hooks, "drain", None)
        if drain is not None:  # after hooks of the commands that just ended
            await drain()
