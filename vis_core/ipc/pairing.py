"""Handing a running child an fd: a socket each child gets at spawn, on which only the host
sends, each message a short note that may carry one fd (``SCM_RIGHTS``).

The sandbox child and an extension worker can each restart alone, so a channel between the two
is made by the host (a ``socketpair``) and each end handed to a process that runs already. The
host never reads a control socket: its end is shut for reading, so a child that writes to it
gets ``EPIPE`` and nothing it sends (fds included) is ever taken in by the host.
"""

from __future__ import annotations

import contextlib
import os
import socket

#: the longest note one message holds (a tool list, a set of grants)
MAX_NOTE = 1 << 20


class ControlSocket:
    """The host's end of one child's control socket; :attr:`child_fd` is passed at spawn
    (``pass_fds``), then closed here with :meth:`spawned`."""

    def __init__(self) -> None:
        self._host, self._child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._host.shutdown(socket.SHUT_RD)  # the child's writes fail: never read here
        self._host.setblocking(False)
        self._child.set_inheritable(True)
        # a note as long as the longest fits, whatever the system's default
        with contextlib.suppress(OSError):
            self._host.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 2 * MAX_NOTE)

    @property
    def child_fd(self) -> int:
        """The child's end, until :meth:`spawned`."""
        return self._child.fileno()

    def spawned(self) -> None:
        """The child holds its end now: close the host's copy of it."""
        self._child.close()

    def send(self, note: bytes, fd: int | None = None) -> bool:
        """Send ``note`` (with ``fd``, which stays open here) without waiting; False when the
        child is gone or does not read (its socket is full): nothing was sent."""
        if len(note) > MAX_NOTE:
            raise ValueError(f"a control note of {len(note):,} bytes, over {MAX_NOTE:,}")
        try:
            if fd is None:
                self._host.send(note, socket.MSG_DONTWAIT)
            else:
                socket.send_fds(self._host, [note], [fd], socket.MSG_DONTWAIT)
        except OSError:  # BlockingIOError, BrokenPipeError, ConnectionResetError, closed
            return False
        return True

    def close(self) -> None:
        self._child.close()
        self._host.close()


class ControlReader:
    """A child's side of its control socket: the notes the host sent, each with the fd it
    carried, if any."""

    def __init__(self, fd: int) -> None:
        self._socket = socket.socket(fileno=fd)
        self._socket.setblocking(False)

    def fileno(self) -> int:
        return self._socket.fileno()

    def receive(self) -> list[tuple[bytes, int | None]] | None:
        """Every note waiting now (none: an empty list); None once the host is gone. An fd
        beyond the first of a note, or a note cut short, is closed and left out."""
        notes: list[tuple[bytes, int | None]] = []
        while True:
            try:
                note, fds, flags, _ = socket.recv_fds(self._socket, MAX_NOTE, 4)
            except BlockingIOError:
                return notes
            except OSError:
                return notes or None
            if not note and not fds:
                return notes or None
            cut = flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC)
            for extra in fds if cut else fds[1:]:
                os.close(extra)
            if not cut:
                notes.append((note, fds[0] if fds else None))

    def close(self) -> None:
        self._socket.close()
