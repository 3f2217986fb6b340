"""A running child is handed an fd on the control socket it got at spawn (``SCM_RIGHTS``), also
through its keeper; what the child writes back to it never reaches the host."""

from __future__ import annotations

import os
import sys
import time

import pytest

from vis_core.ipc.pairing import ControlReader, ControlSocket
from vis_core.system.process import ChildProcess

# the child: waits for a note with an fd (a pipe's write end), writes the note there, then
# tries to write to its control socket, and says how that went
CHILD = """
import os, select, sys
from vis_core.ipc.pairing import ControlReader
reader = ControlReader(int(sys.argv[1]))
while True:
    select.select([reader.fileno()], [], [], 30)
    notes = reader.receive()
    if notes is None:
        os.write(2, b"host gone")
        sys.exit(3)
    if notes:
        break
(note, fd), = notes
try:
    os.write(reader.fileno(), b"to the host")
    answer = b" wrote back"
except OSError as exc:
    answer = b" refused: " + type(exc).__name__.encode()
os.write(fd, note + answer)
"""


def _read_all(fd: int, bound: float = 30.0) -> bytes:
    data = b""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        chunk = os.read(fd, 4096)
        if not chunk:
            return data
        data += chunk
    raise AssertionError("the child did not finish")


@pytest.mark.parametrize("keeper", [None, "sandbox"])
def test_a_running_child_is_handed_an_fd(keeper: str | None) -> None:
    control = ControlSocket()
    boot = f"import sys; sys.path.insert(0, {_root()!r})\n"  # -I: this Vis, from its folder
    argv = [sys.executable, "-I", "-c", boot + CHILD, str(control.child_fd)]
    env = {"PATH": os.environ.get("PATH", "")}
    proc = ChildProcess(argv, env=env, keeper=keeper, pass_fds=(control.child_fd,))
    control.spawned()
    read, write = os.pipe()
    try:
        assert control.send(b"hello", write)  # the child runs already
        os.close(write)
        assert _read_all(read) == b"hello refused: BrokenPipeError"
    finally:
        os.close(read)
        proc.kill()
        proc.process.wait(30)
        control.close()


def test_extra_fds_and_cut_notes_are_closed() -> None:
    control = ControlSocket()
    reader = ControlReader(os.dup(control.child_fd))
    control.spawned()
    one, two = os.pipe()
    try:
        import socket

        host = control._host  # two fds in one note: the second is closed, the first kept
        socket.send_fds(host, [b"two"], [one, two])
        ((note, fd),) = reader.receive() or []
        assert note == b"two" and fd is not None
        assert os.path.samestat(os.fstat(fd), os.fstat(one))
        os.close(fd)
        assert reader.receive() == []  # nothing waits
        control.close()
        assert reader.receive() is None  # the host is gone
    finally:
        os.close(one)
        os.close(two)
        reader.close()


def test_a_note_over_the_limit_is_refused() -> None:
    control = ControlSocket()
    try:
        with pytest.raises(ValueError):
            control.send(b"x" * ((1 << 20) + 1))
    finally:
        control.close()


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["vis_core"].__file__ or "")))
