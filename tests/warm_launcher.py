"""Run a test server script (or ``vis``) in a process forked from this worker's warm parent, as
if it ran here.

``python -I -S warm_launcher.py SOCKET SCRIPT ARGS...`` or ``... SOCKET -m MODULE ARGS...``
(see ``warm_servers.py``): hands this process's open file descriptors, argv, environment, cwd
and umask to the fork server at SOCKET, forwards the signals it receives to the process it
runs, and exits as that did. When this process dies, the fork server kills it. Standard
library built-ins only: it starts in ~10 ms.
"""

from __future__ import annotations

import _signal
import _socket
import marshal
import os
import sys

FORWARDED = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT)
FORWARDED += (_signal.SIGUSR1, _signal.SIGUSR2)


def fail(message: str) -> None:
    sys.stderr.write(f"warm_launcher: {message}\n")
    sys.stderr.flush()
    os._exit(1)


def open_fds() -> list[int]:
    """The file descriptors open here (the one listing the folder is closed again by then)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            os.fstat(int(name))
        except OSError:
            continue
        found.append(int(name))
    return sorted(found)


def main() -> None:
    if len(sys.argv) < 3:
        fail("usage: warm_launcher.py SOCKET (SCRIPT | -m MODULE) [ARGS...]")
    path, script, *args = sys.argv[1:]
    if script == "-m" and not args:
        fail("usage: warm_launcher.py SOCKET (SCRIPT | -m MODULE) [ARGS...]")
    what = f"-m {args[0]}" if script == "-m" else script
    fds = open_fds()
    umask = os.umask(0)
    os.umask(umask)
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    pending: list[int] = []  # signals that came before the server was asked for

    def forward(signum: int, frame: object) -> None:
        if pending or not asked:
            pending.append(signum)
            return
        try:
            conn.sendall(bytes([signum]))
        except OSError:
            pass  # the server is gone already: its status comes (or the loss is said) below

    asked = False
    for signum in FORWARDED:
        _signal.signal(signum, forward)
    payload = marshal.dumps((script, args, dict(os.environ), os.getcwd(), fds, umask))
    message = len(payload).to_bytes(4, "little") + payload
    rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
    # A monitor reads the whole request before it forks the process, so a request it broke
    # off (EPIPE: seen about once in a few hundred runs, cause not found) ran nothing: ask
    # again on a new connection.
    for attempt in range(3):
        try:
            conn.connect(path)
        except OSError as exc:
            fail(f"cannot reach the fork server of the test servers at {path}: {exc}")
        try:
            sent = conn.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
            conn.sendall(message[sent:])
            break
        except OSError as exc:
            if attempt == 2:
                fail(f"the fork server at {path} did not take {what}: {exc}")
            conn.close()
            conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    asked = True
    while pending:  # the monitor sends them on once the server runs
        try:
            conn.sendall(bytes([pending.pop(0)]))
        except OSError:
            break  # the server is gone already
    status = b""
    while len(status) < 4:
        try:
            chunk = conn.recv(4 - len(status))
        except OSError:
            chunk = b""
        if not chunk:
            fail(f"the fork server at {path} ended before {what} did")
        status += chunk
    code = os.waitstatus_to_exitcode(int.from_bytes(status, "little"))
    if code < 0:  # ended by a signal: so is this process, as the server was
        if -code in FORWARDED:
            _signal.signal(-code, _signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


main()
