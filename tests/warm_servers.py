"""The test MCP servers and ``vis`` started warm: forked from a parent that has imported them.

Each server process used to pay ``import mcp`` (with pydantic, anyio, starlette, uvicorn: ~1.4 s
of CPU) before it served anything, and each ``vis`` of a test ~0.3 s importing the Host before
it did any work. :func:`command` gives the command line of a server script run warm,
:func:`vis_command` that of ``python -m vis_core.cli ARGS``: a launcher (``warm_launcher.py``,
~10 ms) hands its file descriptors, argv, environment, cwd and umask to the run's fork
server of that kind, which forks a monitor, which forks the process and runs the script (or
``vis_core.cli``) as ``__main__``, through the interpreter's exit steps. To its starter it
looks like one process: the launcher forwards the signals it gets (to a server's process
group, to ``vis`` itself, as a signal to a cold one reaches it alone) and exits as the process
did; when the launcher dies, the monitor kills the process's group; when the monitor dies, the
kernel kills the process (``PR_SET_PDEATHSIG``); when the run ends, the fork server ends its
monitors. Under xdist the controller starts the fork servers of both kinds before its workers
(:func:`share`) and they serve all of them (each worker importing its own pair cost ~1.9 s of
CPU); a run in one process starts each on first use. The servers themselves are the
SDK-built scripts, unchanged.

A warm process differs from a cold one only where the process itself is the subject: its
``/proc`` command line and parent are the fork server's and monitor's, its session (no
controlling terminal), process group and resource limits its own or the fork server's, its
interpreter's start (flags, hash seed) the fork server's, and its modules were imported
before its environment was known. So the fork servers import with an environment holding
none of the test's values, and the tests of startup, isolation, process trees and terminals
run ``vis`` cold. A ``vis`` whose environment sets what the interpreter reads at its start
(``PYTHON*``, the locale) otherwise than the fork server's runs cold too.

Run as a script, this file is the fork server: ``python -P warm_servers.py FD KIND`` (a
listening Unix socket; ``servers`` or ``vis``), ending when its stdin (a pipe from the process
that started it) closes. It stays single-threaded, so forking it is safe.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

LAUNCHER = Path(__file__).with_name("warm_launcher.py")
SERVERS, VIS = "servers", "vis"  # the kinds of fork server
PRELOAD = {
    SERVERS: (  # what the test servers import (server_app, oauth_server_app, editor_mcp_server)
        "mcp_types",
        "pydantic",
        "anyio._backends._asyncio",
        "starlette.requests",
        "starlette.responses",
        "mcp.server.mcpserver",
        "mcp.server.mcpserver.utilities.types",
        "mcp.server.stdio",
        "mcp.server.sse",
        "mcp.server.streamable_http_manager",
        "mcp.server.auth.provider",
        "mcp.server.auth.settings",
        "mcp.shared.auth",
        "rich.console",
        "rich.logging",
        "rich.table",
        "uvicorn",
        "uvicorn.lifespan.on",
        "uvicorn.loops.asyncio",
        "uvicorn.loops.auto",
        "uvicorn.protocols.http.auto",
        "uvicorn.protocols.http.h11_impl",
        "uvicorn.protocols.websockets.auto",
    ),
    # What `python -X importtime -m vis_core.cli` imports for the commands the tests run (run,
    # acp, doctor, mcp, settings, drafts, export, replay, sessions), the MCP client and the
    # providers; not vis_core.cli itself (run as __main__, as `-m` runs it) nor the app.
    VIS: (
        "argparse",
        "asyncio",
        "hashlib",
        "msgspec",
        "yaml",
        "rich.console",
        "vis_core.model.channel",
        "vis_core.mcp.arguments",
        "vis_core.system.standard_streams",
        "vis_core.system.held_logs",
        "vis_core.system.redaction",
        "vis_core.system.jail_check",
        "vis_core.system.leftovers",
        "vis_core.terminal",
        "vis_core.installed",
        "vis_core.paths",
        "vis_core.extension.metadata",
        "vis_core.host",
        "vis_core.host_options",
        "vis_core.printmode",
        "vis_core.providers.scripted",
        "vis_core.providers.factory",
        "vis_core.providers.openai_provider",
        "vis_core.providers.anthropic_provider",
        "vis_core.acp.server",
        "vis_core.acp.agent",
        "acp",
        "acp.stdio",
        "vis_core.mcp.cli",
        "vis_core.mcp.client",
        "vis_core.mcp.oauth",
        "mcp.client.session",
        "mcp.client.stdio",
        "mcp.client.sse",
        "mcp.client.streamable_http",
        "mcp.shared.exceptions",
        "vis_core.doctor",
        "vis_core.settings_cli",
        "vis_core.drafts_cli",
        "vis_core.session_cli",
        "vis_core.ask_terminal",
        # and what the Host imports as it opens and runs a turn
        "ctypes",
        "resource",
        "vis_core.codegen_cache",
        "vis_core.agent.person_images",
        "vis_core.agent.person_input",
        "vis_core.commands.files",
        "vis_core.context.fold_tool",
        "vis_core.context.service",
        "vis_core.contracts.build",
        "vis_core.extension.grants",
        "vis_core.extension.mcp_servers",
        "vis_core.extension.network",
        "vis_core.extension.providers",
        "vis_core.extension_host.network_filters",
        "vis_core.extension_host.output",
        "vis_core.extension_host.symbol_tools",
        "vis_core.file_queue",
        "vis_core.ipc.pairing",
        "vis_core.mcp.host",
        "vis_core.providers.retry",
        "vis_core.records.rebuild",
        "vis_core.sandbox.calls",
        "vis_core.sandbox.host",
        "vis_core.sandbox.reroot",
        "vis_core.subagents.tools",
        "vis_core.system.keeper",
        "vis_core.system.shell",
        "vis_core.tools.activities",
        "vis_core.tools.background",
        "vis_core.tools.block_changes",
        "vis_core.tools.builtins",
        "vis_core.tools.edit",
        "vis_core.tools.files",
        "vis_core.tools.search",
        "vis_core.tools.sessions",
        "vis_core.tools.testing",
        "vis_core.tools.versions",
    ),
}
KEPT = ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONDONTWRITEBYTECODE")  # a server fork server's
MAX_FDS = 64  # file descriptors a launcher may hand over
FORK_SERVER = "fork-server"  # the socket's name in its private folder
VIS_MODULE = "vis_core.cli"

_lock = threading.Lock()
_parents: dict[str, tuple[subprocess.Popen[bytes], str]] = {}  # kind -> (fork server, folder)
_shared: dict[str, str] = {}  # kind -> socket of a fork server another process started


def command(script: Path, *args: str) -> list[str]:
    """The command line (program first) that runs ``python script *args`` warm."""
    return [sys.executable, "-I", "-S", str(LAUNCHER), _socket_path(SERVERS), str(script), *args]


def vis_command(*args: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The command line that runs ``python -m vis_core.cli *args`` warm in ``env`` (default:
    this process's); cold where ``env`` sets what Python reads at its start (``PYTHON*``, the
    locale) otherwise than the fork server's environment, which the warm one keeps."""
    cold = [sys.executable, "-m", VIS_MODULE, *args]
    given = os.environ if env is None else env
    if _startup(given) != _startup(os.environ):
        return cold
    return [sys.executable, "-I", "-S", str(LAUNCHER), _socket_path(VIS), "-m", VIS_MODULE, *args]


def _startup(env: Mapping[str, str]) -> dict[str, str]:
    """What of ``env`` the interpreter reads before any module runs: its ``PYTHON*``
    variables and the locale (the standard streams' encoding, the C locale)."""
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LC_")) or k == "LANG"}


def _environment(kind: str) -> dict[str, str]:
    """The fork server's environment: none of a test's values. The ``vis`` one has only
    ``PATH`` and :func:`_startup` (nothing Vis reads to find its files while importing)."""
    if kind == VIS:
        return {"PATH": os.environ.get("PATH", os.defpath), **_startup(os.environ)}
    return {k: v for k, v in os.environ.items() if k in KEPT or k.startswith("LC_")}


def share() -> dict[str, str]:
    """Start the fork servers of both kinds here (the xdist controller, before its workers
    start) and return their sockets, for each worker's :func:`use`. They end with
    :func:`stop` in this process, after the workers have ended."""
    return {kind: _socket_path(kind) for kind in PRELOAD}


def use(sockets: dict[str, str]) -> None:
    """Launch through the fork servers at ``sockets`` (from :func:`share`) instead of
    starting this process's own."""
    _shared.update(sockets)


def _socket_path(kind: str) -> str:
    """The socket of the fork server of ``kind``: the shared one, or this process's, started
    on first use. Its socket listens before it starts: a launcher's connection waits in the
    queue until the modules are imported, no readiness wait."""
    if kind in _shared:
        return _shared[kind]
    with _lock:
        if kind not in _parents:
            folder = tempfile.mkdtemp(prefix="vis-warm-")  # 0700: only this user connects
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
                listening.bind(os.path.join(folder, FORK_SERVER))
                listening.listen(64)
                parent = subprocess.Popen(
                    [sys.executable, "-P", __file__, str(listening.fileno()), kind],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    pass_fds=[listening.fileno()],
                    start_new_session=True,  # a Ctrl+C in the terminal is not for it
                    cwd="/",
                    env=_environment(kind),
                )
            if not _parents:
                atexit.register(stop)  # where no pytest hook calls it (snapshots/ alone)
            _parents[kind] = (parent, folder)
        return os.path.join(_parents[kind][1], FORK_SERVER)


def stop() -> None:
    """End the fork servers (and any process they still run), and reap them."""
    with _lock:
        parents = list(_parents.values())
        _parents.clear()
    for parent, _ in parents:
        assert parent.stdin is not None
        parent.stdin.close()  # its end of the pipe: it ends its monitors, then itself
    for parent, folder in parents:
        try:
            parent.wait(30)
        except subprocess.TimeoutExpired:
            parent.kill()
            parent.wait()
        shutil.rmtree(folder, ignore_errors=True)


# The fork server: everything below runs in it, its monitors and their servers.


def _serve(listening: socket.socket, kind: str) -> None:
    """Accept launchers and fork a monitor for each, until stdin closes."""
    import ctypes  # noqa: F401  (its children's prctl)
    import gc
    import importlib
    import select

    for name in PRELOAD[kind]:
        importlib.import_module(name)
    if len(os.listdir("/proc/self/task")) != 1:  # a fork copies only the forking thread
        raise RuntimeError(f"importing the {kind} modules started a thread: cannot fork")
    if kind == VIS:
        _check_unset()
    gc.freeze()  # the children need not copy the imported objects' pages to collect them
    poller = select.poll()
    poller.register(listening, select.POLLIN)
    poller.register(0, select.POLLIN)
    monitors: dict[int, int] = {}  # pidfd -> pid
    while True:
        for fd, _ in poller.poll():
            if fd == 0:
                if not os.read(0, 512):
                    return _end(listening, monitors)
            elif fd == listening.fileno():
                try:
                    conn, _ = listening.accept()
                except OSError:  # a launcher that left at once; the next one is served
                    continue
                pid = os.fork()
                if pid == 0:
                    _monitor(conn, listening, list(monitors), group=kind == SERVERS)
                conn.close()
                pidfd = os.pidfd_open(pid)
                monitors[pidfd] = pid
                poller.register(pidfd, select.POLLIN)
            else:
                os.waitpid(monitors.pop(fd), 0)
                poller.unregister(fd)
                os.close(fd)


def _end(listening: socket.socket, monitors: dict[int, int]) -> None:
    """The run is over (or its process gone): each monitor kills its server, then they are
    reaped."""
    import signal

    listening.close()
    for pid in monitors.values():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass  # ended on its own, reaped below
    for pid in monitors.values():
        os.waitpid(pid, 0)


def _check_unset() -> None:
    """What a ``vis`` process sets from its environment once must not be set by the imports:
    the dataclass code cache (``$VIS_HOME/cache``: :func:`vis_core.codegen_cache.install`),
    the temporary folder (``$TMPDIR``), ``vis_core.cli`` (run as ``__main__``, not imported)."""
    import dataclasses
    import tempfile

    if "exec" in vars(dataclasses):
        raise RuntimeError("the imports installed the dataclass code cache: a VIS_HOME's own")
    if tempfile.tempdir is not None:
        raise RuntimeError("the imports chose the temporary folder: the TMPDIR of each run's")
    if VIS_MODULE in sys.modules:
        raise RuntimeError(f"the imports imported {VIS_MODULE}: -m runs it as __main__ alone")


def _monitor(
    conn: socket.socket, listening: socket.socket, pidfds: list[int], *, group: bool
) -> NoReturn:
    """Fork the process a launcher asked for, forward its signals (to its process group when
    ``group``, else to it alone), send back how it ended; kill its group when the launcher
    dies (or this monitor is told to end)."""
    import select
    import signal
    import traceback

    status = 1
    try:
        listening.close()
        for fd in pidfds:
            os.close(fd)
        fds, request, signals = _receive(conn)
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            _run(request, fds, conn, me)
        for fd in fds:
            os.close(fd)

        def everyone(signum: int) -> None:
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass  # the group has ended: how is sent below

        def forward(signum: int) -> None:
            if group:
                return everyone(signum)
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass  # it has ended: how is sent below

        signal.signal(signal.SIGTERM, lambda *_: everyone(signal.SIGKILL))
        for signum in signals:
            forward(signum)
        pidfd = os.pidfd_open(pid)
        poller = select.poll()
        poller.register(conn, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == pidfd:
                    _, ended = os.waitpid(pid, 0)
                    everyone(signal.SIGKILL)  # what it left in its group, as Vis's stop ends it
                    try:
                        conn.sendall(ended.to_bytes(4, "little"))
                    except OSError:
                        pass  # the launcher is gone
                    status = 0
                    return _exit(status)
                try:
                    data = conn.recv(64)
                except OSError:
                    data = b""
                if not data:  # the launcher died (or was killed): so does its process
                    everyone(signal.SIGKILL)
                    poller.unregister(conn)
                for signum in data:
                    forward(signum)
    except BaseException:
        traceback.print_exc()
    return _exit(status)


def _exit(status: int) -> NoReturn:
    os._exit(status)


def _receive(conn: socket.socket) -> tuple[list[int], Any, bytes]:
    """The launcher's file descriptors, its request, and the signals it sent after it."""
    import array
    import marshal

    fds: list[int] = []
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "little"):
        chunk, ancillary, flags, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(MAX_FDS * 4))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += array.array("i", payload[: len(payload) - len(payload) % 4])
        if flags & socket.MSG_CTRUNC:
            raise RuntimeError(f"a launcher handed over more than {MAX_FDS} file descriptors")
        if not chunk:
            raise ConnectionError("the launcher left before it said what to run")
        data += chunk
    end = 4 + int.from_bytes(data[:4], "little")
    return fds, marshal.loads(data[4:end]), data[end:]


def _run(request: Any, fds: list[int], conn: socket.socket, monitor: int) -> NoReturn:
    """In the process: take on the launcher's descriptors, environment, cwd, umask and argv,
    and run its script (or ``-m`` module) as ``__main__``."""
    import ctypes
    import runpy
    import signal
    import traceback

    status = 1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: the monitor's end is its own
        if os.getppid() != monitor:  # the monitor ended before that was set
            return _exit(1)
        os.setsid()  # its own group (as the SDK starts a server), which the monitor can end
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        conn.close()
        script, args, env, cwd, targets, umask = request
        _take(fds, targets)
        os.umask(umask)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        if script == "-m":  # as `python -m` finds it: in the working directory first
            sys.argv = [script, *args[1:]]
            sys.path.insert(0, os.getcwd())
            status = _main(lambda: runpy.run_module(args[0], run_name="__main__", alter_sys=True))
        else:
            sys.argv = [script, *args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # -P kept tests/ out
            status = _main(lambda: runpy.run_path(script, run_name="__main__"))
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass  # its reader is gone, as for any process
    return _exit(status)


def _take(fds: list[int], targets: list[int]) -> None:
    """The received ``fds`` become ``targets`` (the numbers they had in the launcher); every
    other descriptor is closed, as in a process started with only those."""
    import fcntl

    floor = max([*fds, *targets, 2]) + 1
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor) for fd in fds]
    for fd in fds:
        os.close(fd)
    for fd, target in zip(high, targets, strict=True):
        os.dup2(fd, target)
    keep = set(targets)
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:
                pass  # the descriptor of the listing itself, closed by then
    _standard_streams(keep)


def _standard_streams(keep: set[int]) -> None:
    """``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` made anew on the descriptors taken, as
    Python makes them at its start: buffered ones line-buffered on a terminal (stderr always),
    with the fork server's buffering, encoding and errors (its environment's, which a warm
    run's shares); ``None`` where the launcher had the descriptor closed."""
    import io

    for number, name in enumerate(("stdin", "stdout", "stderr")):
        was = getattr(sys, f"__{name}__")
        stream = None
        if number in keep and was is not None:
            raw = io.FileIO(number, "rb" if number == 0 else "wb", closefd=False)
            unbuffered = isinstance(was.buffer, io.FileIO)  # -u, PYTHONUNBUFFERED
            if unbuffered:
                buffered: Any = raw
            elif number == 0:
                buffered = io.BufferedReader(raw)
            else:
                buffered = io.BufferedWriter(raw)
            stream = io.TextIOWrapper(
                buffered,
                encoding=was.encoding,
                errors=was.errors,
                newline="\n",
                line_buffering=not unbuffered and (number == 2 or raw.isatty()),
                write_through=was.write_through,
            )
            stream.mode = "r" if number == 0 else "w"  # type: ignore[misc]  # as Python's
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _main(run: Callable[[], object]) -> int:
    """Run ``run`` (the script or module as ``__main__``) as ``python`` would, through the
    interpreter's exit steps."""
    import atexit
    import signal

    interrupted = False
    try:
        run()
        status = 0
    except SystemExit as exc:
        status = _status_of(exc.code)
    except BaseException as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = 1
        interrupted = isinstance(exc, KeyboardInterrupt)
    threading._shutdown()  # type: ignore[attr-defined]  # waits for non-daemon threads
    atexit._run_exitfuncs()
    if interrupted:  # as Python ends on an uncaught Ctrl+C: by SIGINT
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


def _status_of(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2])
