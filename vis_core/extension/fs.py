"""``vis.fs`` (files with the extension's permissions) and ``vis.shell`` / ``vis.jailed_shell``."""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import os
import shutil
import stat
import threading
import weakref
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.config import load_config
from vis_core.extension.acting import current_extension
from vis_core.extension.context import current_call
from vis_core.extension.place import require_trusted, require_trusted_fs
from vis_core.extension.roots import project_root, workspace_root
from vis_core.paths import VisPaths
from vis_core.system.loops import on_loop
from vis_core.system.shell import (
    ShellHandle,
    ShellManager,
    ShellStatus,
    start_handle,
    time_limit,
)

if TYPE_CHECKING:
    from vis_core.system.git_control import GitLooks

T = TypeVar("T")
SHELL_KEYS = frozenset({"command", "cwd", "env", "timeout"})
JAIL_KEYS = frozenset({"allow_read_write", "unix_connect"})


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once: os.umask is process-wide, so never flip it per write


def _path(path: str | os.PathLike[str]) -> Path:
    """Relative paths start at the session's working copy (the cwd outside Vis)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"vis.fs: a path must be text or a Path, got {type(path).__name__}")
    target = Path(path).expanduser()
    return target if target.is_absolute() else workspace_root() / target


class FileSystem:
    """``vis.fs``: mkdir, write, read (bytes), read_text, copy, move, list, stat and remove."""

    def mkdir(
        self, path: str | os.PathLike[str], *, parents: bool = True, exist_ok: bool = True
    ) -> Path:
        require_trusted_fs("vis.fs.mkdir")
        target = _path(path)
        target.mkdir(parents=parents, exist_ok=exist_ok)
        return target

    def write(
        self, path: str | os.PathLike[str], data: bytes | str, *, encoding: str = "utf-8"
    ) -> int:
        """Write ``data`` (bytes, or text as ``encoding``) atomically; the folder is created."""
        require_trusted_fs("vis.fs.write")
        from vis_core.extension.mutation import file_mutation_queue
        from vis_core.system.files import atomic_write

        raw = data.encode(encoding) if isinstance(data, str) else bytes(data)
        target = _path(path)
        with file_mutation_queue(target) as real:  # one queue with patch: no change is lost
            target = Path(real)  # through a symlink to its file, as open() would write
            try:
                mode = stat.S_IMODE(os.stat(target).st_mode)  # an existing file keeps its mode
            except FileNotFoundError:
                mode = 0o666 & ~_UMASK
            atomic_write(target, raw, mode=mode)  # a unique temporary name, renamed over
        return len(raw)

    def read(self, path: str | os.PathLike[str]) -> bytes:
        require_trusted_fs("vis.fs.read")
        return _path(path).read_bytes()

    def read_text(self, path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
        require_trusted_fs("vis.fs.read_text")
        return _path(path).read_text(encoding=encoding)

    def copy(self, source: str | os.PathLike[str], target: str | os.PathLike[str]) -> Path:
        """Copy a file or a whole folder; returns the new path."""
        require_trusted_fs("vis.fs.copy")
        src, dst = _path(source), _path(target)
        if src.is_dir():
            return Path(shutil.copytree(src, dst))
        dst.parent.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(src, dst))

    def move(self, source: str | os.PathLike[str], target: str | os.PathLike[str]) -> Path:
        require_trusted_fs("vis.fs.move")
        dst = _path(target)
        dst.parent.mkdir(parents=True, exist_ok=True)
        return Path(shutil.move(_path(source), dst))

    def list(self, path: str | os.PathLike[str] = ".") -> list[str]:
        """The names in a folder, sorted."""
        require_trusted_fs("vis.fs.list")
        return sorted(entry.name for entry in os.scandir(_path(path)))

    def stat(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        require_trusted_fs("vis.fs.stat")
        target = _path(path)
        info = target.stat()
        return {
            "path": str(target),
            "size": info.st_size,
            "is_dir": target.is_dir(),
            "is_file": target.is_file(),
            "is_symlink": target.is_symlink(),
            "mode": info.st_mode,
            "modified": info.st_mtime,
        }

    def exists(self, path: str | os.PathLike[str]) -> bool:
        require_trusted_fs("vis.fs.exists")
        return _path(path).exists()

    def remove(self, path: str | os.PathLike[str], *, recursive: bool = False) -> None:
        """Remove a file, an empty folder, or with ``recursive=True`` a whole folder."""
        require_trusted_fs("vis.fs.remove")
        target = _path(path)
        if target.is_dir() and not target.is_symlink():
            if recursive:
                shutil.rmtree(target)
            else:
                target.rmdir()
        else:
            target.unlink()


fs = FileSystem()


class _ProcessLoop:
    """One event loop thread that drains every extension child's output, also while it waits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.shells = ShellManager(host_environment=True)

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="vis-extension-processes", daemon=True
                )
                thread.start()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        loop = self.loop()
        if on_loop(loop):
            coro.close()
            raise RuntimeError("a process handle cannot be driven from its own event loop")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    def stop_all(self) -> None:
        if self._loop is None or self._loop.is_closed() or not self.shells.handles:
            return
        try:
            self.run(self.shells.close_all(), timeout=10)
        except Exception:  # exiting: nothing more can be done for a stuck child
            pass


PROCESSES = _ProcessLoop()
atexit.register(PROCESSES.stop_all)


class Process:
    """A live child: ``logs()``, ``wait(seconds)``, ``type(text)``, ``stop()``."""

    def __init__(self, handle: ShellHandle, jailed: bool) -> None:
        self._handle = handle
        self.jailed = jailed
        self._read: list[bool] = []  # set once the extension reads the output
        # output the extension never read goes to its log when the handle is gone
        weakref.finalize(self, _log_unread, handle, current_extension() or "vis", self._read)

    def __repr__(self) -> str:
        return f"<vis process pid {self.pid} {'jailed ' if self.jailed else ''}{self.command!r}>"

    @property
    def command(self) -> str:
        return self._handle.command

    @property
    def pid(self) -> int:
        return self._handle.pid

    @property
    def running(self) -> bool:
        return self._handle.running

    @property
    def exit_code(self) -> int | None:
        return self._handle.exit_code

    def logs(self) -> str:
        """Everything printed so far, stdout and stderr in arrival order (8 MiB per stream)."""

        self._read.append(True)

        async def read() -> str:
            return self._handle.printed()

        return PROCESSES.run(read())

    def stdout(self) -> str:
        self._read.append(True)
        return PROCESSES.run(_text(self._handle, "stdout"))

    def stderr(self) -> str:
        self._read.append(True)
        return PROCESSES.run(_text(self._handle, "stderr"))

    def wait(self, seconds: float | None = 30) -> ShellStatus:
        """Wait up to ``seconds`` for the exit; TimeoutError says what to do if it still runs."""
        return PROCESSES.run(self._handle.wait(seconds))

    def type(self, text: str) -> None:
        """Write ``text`` to the child's stdin (add ``\\n`` to press Enter)."""
        PROCESSES.run(self._handle.type(text))

    def stop(self) -> ShellStatus:
        """Stop the child's whole process group: SIGTERM, then SIGKILL after a grace period."""
        return PROCESSES.run(self._handle.stop())


def _log_unread(handle: ShellHandle, owner: str, read: list[bool]) -> None:
    """Write a child's output to the extension's log when the extension never read it."""
    if read:
        return
    try:
        text = handle.combined()
    except Exception:  # a finalizer must not raise
        return
    if not text.strip():
        return
    from vis_core.extension.logs import write_log

    state = "running" if handle.exit_code is None else f"exit {handle.exit_code}"
    write_log(
        "info",
        f"output of `{handle.command}` ({state}) that was not read",
        source=owner,
        detail=text,
    )


async def _text(handle: ShellHandle, stream: str) -> str:
    return getattr(handle, stream).text()


def _paths(value: Any, key: str) -> tuple[Path, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str | os.PathLike) else value
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise ValueError(f"{key} must be a path or a list of paths")
    out = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise ValueError(f"{key} must hold paths, not {type(item).__name__}")
        path = Path(item).expanduser()
        if not path.is_absolute():
            raise ValueError(f"{key}: {item} must be an absolute path")
        out.append(path)
    return tuple(out)


def _spec(spec: dict[str, Any] | str, allowed: frozenset[str], what: str) -> dict[str, Any]:
    if isinstance(spec, str):
        spec = {"command": spec}
    if not isinstance(spec, dict):
        raise TypeError(f"{what} takes a dict such as {{'command': 'make'}}")
    unknown = sorted(set(spec) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        raise ValueError(f"{what}: unknown option {', '.join(unknown)}; use {known}")
    command = spec.get("command")
    if isinstance(command, list | tuple):
        import shlex

        command = shlex.join(str(part) for part in command)
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{what}: 'command' must be a nonblank command line or argv list")
    env = spec.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValueError(f"{what}: 'env' must map names to text values")
    timeout = time_limit(spec.get("timeout"), f"{what}: 'timeout'")
    cwd_value = spec.get("cwd")
    cwd = project_root() if not cwd_value else Path(cwd_value).expanduser()
    if not cwd.is_absolute():
        cwd = project_root() / cwd
    if not cwd.is_dir():
        raise NotADirectoryError(f"{what}: cwd {cwd} is not a folder")
    return {**spec, "command": command, "cwd": cwd, "env": dict(env), "timeout": timeout}


def _output_dir() -> Path:
    return VisPaths.from_env().data_dir / "outputs" / "extensions"


def _start(
    spec: dict[str, Any], jail: Path | None, terms: JailTerms, extra: tuple[Path, ...]
) -> Process:
    from vis_core.extension.runtime import current_runtime

    looks = None if jail is None else current_runtime().git_looks  # of the calling thread

    async def start() -> ShellHandle:
        if jail is not None:
            return await _start_jailed(spec, jail, terms, extra, looks)
        return await PROCESSES.shells.start(
            spec["command"],
            cwd=spec["cwd"],
            output_dir=_output_dir(),
            timeout=spec["timeout"],
            env=spec["env"],
        )

    return Process(PROCESSES.run(start()), jailed=jail is not None)


async def _start_jailed(
    spec: dict[str, Any],
    jail: Path,
    terms: JailTerms,
    extra: tuple[Path, ...],
    looks: GitLooks | None,
) -> ShellHandle:
    """Like ``ShellManager.start`` under the jail, with the extension's grants bound (read-only
    and read-write), ``extra`` paths read-write and the git files ``looks`` finds read-only."""
    import functools
    import shlex

    from vis_core.system.jail import jail_argv

    shell = "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"
    script = f"cd -- {shlex.quote(str(spec['cwd']))} || exit 125\n{spec['command']}"
    from vis_core.system.environ import child_environment

    environment = child_environment(terms.project_values, spec["env"])
    handle = await start_handle(  # its keeper ends every process of it when Vis ends
        spec["command"],
        [shell, "-c", script],
        _output_dir(),
        timeout=spec["timeout"],
        cwd=spec["cwd"],
        env=environment,
        jail=functools.partial(
            jail_argv,
            workspace=jail,
            read_only=terms.read,
            read_write=(*terms.write, *extra),
            project_root=terms.project_root,
            git_looks=looks,
        ),
    )
    PROCESSES.shells.handles[handle.id] = handle
    return handle


def shell(spec: dict[str, Any] | str) -> Process:
    """Start ``{"command", "cwd", "env", "timeout"}`` without any jail and return its handle.

    A relative or empty ``cwd`` starts at ``vis.project_root()``.
    """
    require_trusted("vis.shell")
    return _start(_spec(spec, SHELL_KEYS, "vis.shell()"), None, JailTerms(), ())


@dataclasses.dataclass(frozen=True)
class JailTerms:
    """What confines a child of the running call: its session's jail (on, or why nothing may
    run), its project (root and values) and the calling extension's grants."""

    on: bool = False
    refusal: str | None = None
    project_root: Path | None = None
    project_values: dict[str, str] = dataclasses.field(default_factory=dict)
    read: tuple[Path, ...] = ()
    write: tuple[Path, ...] = ()


def _session_jail() -> JailTerms:
    """The running call's :class:`JailTerms`, from the runtime (an extension worker asks the
    host for them)."""
    from vis_core.extension.runtime import current_runtime

    return current_runtime().jail_terms()


def jail_enabled(terms: JailTerms | None = None) -> bool:
    """Whether extension children are jailed: the ``jail`` setting of config.toml on disk, read
    again at every spawn, or of the running call's session (either one switches it on).
    Raises :class:`PermissionError` when it cannot be read: nothing runs unconfined because
    a file was broken."""
    from vis_core.system.jail import jail_refusal

    config = load_config(VisPaths.from_env().config_file)
    value = config.data.get("jail", False)
    if config.problem is not None:
        raise PermissionError(jail_refusal(config.problem))
    if not isinstance(value, bool):
        raise PermissionError(
            jail_refusal(f"{config.path}: setting 'jail' takes true or false, got {value!r}")
        )
    terms = _session_jail() if terms is None else terms
    if terms.refusal is not None:
        raise PermissionError(terms.refusal)
    return value or terms.on


def jailed_shell(spec: dict[str, Any] | str) -> Process:
    """Like :func:`shell`, confined by the jail policy on disk (when the jail is enabled).

    ``allow_read_write`` (paths) and ``unix_connect`` (socket paths) add exactly those paths;
    the calling extension's grants are added too. With the jail disabled, both are ignored.
    """
    require_trusted("vis.jailed_shell")
    parsed = _spec(spec, SHELL_KEYS | JAIL_KEYS, "vis.jailed_shell()")
    extra = _paths(parsed.get("allow_read_write"), "allow_read_write") + _paths(
        parsed.get("unix_connect"), "unix_connect"
    )
    terms = _session_jail()
    if not jail_enabled(terms):
        return _start(parsed, None, terms, ())
    root = workspace_root() if current_call() is not None else Path.cwd()
    return _start(parsed, root, terms, extra)
