"""The test MCP servers started warm: forked from a parent that has imported the SDK already.

Each server process used to pay ``import mcp`` (with pydantic, anyio, starlette, uvicorn: ~1.4 s
of CPU) before it served anything. :func:`command` gives the command line of a server script
run warm: a launcher (``warm_launcher.py``, ~10 ms) hands its file descriptors, argv,
environment, cwd and umask to this worker's fork server, which forks a monitor, which forks
the server and runs the script as ``__main__``. To Vis it looks like one process: the launcher
forwards the signals it gets to the server's process group and exits as the server did; when
the launcher dies, the monitor kills the server's group; when the monitor dies, the kernel
kills the server (``PR_SET_PDEATHSIG``); when the worker ends or dies, the fork server ends
its monitors. The servers themselves are the SDK-built scripts, unchanged.

Run as a script, this file is the fork server: ``python -P warm_servers.py FD`` (a listening
Unix socket), ending when its stdin (a pipe from the worker) closes. It stays single-threaded, so
forking it is safe.
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
from pathlib import Path
from typing import Any, NoReturn

LAUNCHER = Path(__file__).with_name("warm_launcher.py")
PRELOAD = (  # what the test servers import (server_app, oauth_server_app, editor_mcp_server)
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
)
KEPT = ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONDONTWRITEBYTECODE")  # the fork server's own
MAX_FDS = 64  # file descriptors a launcher may hand over
FORK_SERVER = "fork-server"  # the socket's name in its private folder

_lock = threading.Lock()
_parent: subprocess.Popen[bytes] | None = None
_folder: str | None = None


def command(script: Path, *args: str) -> list[str]:
    """The command line (program first) that runs ``python script *args`` warm."""
    return [sys.executable, "-I", "-S", str(LAUNCHER), _socket_path(), str(script), *args]


def _socket_path() -> str:
    """The fork server's socket, started on first use. Its socket listens before it starts:
    a launcher's connection waits in the queue until the SDK is imported, no readiness wait.
    Its environment holds none of the test's values (a server takes on its launcher's)."""
    global _parent, _folder
    with _lock:
        if _parent is None:
            folder = tempfile.mkdtemp(prefix="vis-warm-")  # 0700: only this user connects
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
                listening.bind(os.path.join(folder, FORK_SERVER))
                listening.listen(64)
                _parent = subprocess.Popen(
                    [sys.executable, "-P", __file__, str(listening.fileno())],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    pass_fds=[listening.fileno()],
                    start_new_session=True,  # a Ctrl+C in the terminal is not for it
                    cwd="/",
                    env={k: v for k, v in os.environ.items() if k in KEPT or k.startswith("LC_")},
                )
            _folder = folder
            atexit.register(stop)  # where no pytest hook calls it (snapshots/ alone)
        assert _folder is not None
        return os.path.join(_folder, FORK_SERVER)


def stop() -> None:
    """End the fork server (and any server it still runs), and reap it."""
    global _parent, _folder
    with _lock:
        parent, folder, _parent, _folder = _parent, _folder, None, None
    if parent is None:
        return
    assert parent.stdin is not None
    parent.stdin.close()  # its end of the pipe: it ends its monitors, then itself
    try:
        parent.wait(30)
    except subprocess.TimeoutExpired:
        parent.kill()
        parent.wait()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


# The fork server: everything below runs in it, its monitors and their servers.


def _serve(listening: socket.socket) -> None:
    """Accept launchers and fork a monitor for each, until stdin closes."""
    import ctypes  # noqa: F401  (its children's prctl)
    import gc
    import importlib
    import select

    for name in PRELOAD:
        importlib.import_module(name)
    if len(os.listdir("/proc/self/task")) != 1:  # a fork copies only the forking thread
        raise RuntimeError("importing the test servers' modules started a thread: cannot fork")
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
                    _monitor(conn, listening, list(monitors))
                conn.close()
                pidfd = os.pidfd_open(pid)
                monitors[pidfd] = pid
                poller.register(pidfd, select.POLLIN)
            else:
                os.waitpid(monitors.pop(fd), 0)
                poller.unregister(fd)
                os.close(fd)


def _end(listening: socket.socket, monitors: dict[int, int]) -> None:
    """The worker is gone or done: each monitor kills its server, then they are reaped."""
    import signal

    listening.close()
    for pid in monitors.values():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass  # ended on its own, reaped below
    for pid in monitors.values():
        os.waitpid(pid, 0)


def _monitor(conn: socket.socket, listening: socket.socket, pidfds: list[int]) -> NoReturn:
    """Fork the server a launcher asked for, forward its signals, send back how it ended;
    kill it when the launcher dies (or this monitor is told to end)."""
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

        def group(signum: int) -> None:
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass  # the group has ended: how is sent below

        signal.signal(signal.SIGTERM, lambda *_: group(signal.SIGKILL))
        for signum in signals:
            group(signum)
        pidfd = os.pidfd_open(pid)
        poller = select.poll()
        poller.register(conn, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == pidfd:
                    _, ended = os.waitpid(pid, 0)
                    group(signal.SIGKILL)  # what it left in its group, as Vis's stop ends it
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
                if not data:  # the launcher died (or was killed): so does its server
                    group(signal.SIGKILL)
                    poller.unregister(conn)
                for signum in data:
                    group(signum)
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
    """In the server's process: take on the launcher's descriptors, environment, cwd, umask
    and argv, and run its script as ``__main__``."""
    import ctypes
    import signal
    import traceback

    status = 1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: the monitor's end is its own
        if os.getppid() != monitor:  # the monitor ended before that was set
            return _exit(1)
        os.setsid()  # its own group, as the SDK starts a server; the monitor signals the group
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        conn.close()
        script, args, env, cwd, targets, umask = request
        _take(fds, targets)
        os.umask(umask)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # -P kept tests/ out
        status = _main(script)
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
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        if number not in keep:  # as Python starts with a closed standard stream
            setattr(sys, name, None)


def _main(script: str) -> int:
    """Run ``script`` as ``python script`` would, through the interpreter's exit steps."""
    import atexit
    import runpy
    import signal

    interrupted = False
    try:
        runpy.run_path(script, run_name="__main__")
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
    _serve(socket.socket(fileno=int(sys.argv[1])))
