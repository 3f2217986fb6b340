"""One supervisor of the Python children Vis talks to over pipes (the extension workers):
isolated start, its own session, stderr drained into the log, stop, and how it ended.

The sandbox's child runs under its keeper (:mod:`vis_core.system.lifetime`), which owns the
whole tree of the block; how it ended is told the same way, by :class:`Ending`.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vis_core.system.child_process import python_argv

log = logging.getLogger(__name__)
LINGER = 5.0  # seconds a child that closed its pipe may take to exit before it is killed


@dataclass(frozen=True)
class Ending:
    """How a child ended: its exit code, negative for the signal that killed it (None: not
    known, e.g. it never started)."""

    code: int | None

    @property
    def signal(self) -> str | None:
        """The name of the signal that killed it (``SIGSEGV``); None when it exited."""
        if self.code is None or self.code >= 0:
            return None
        try:
            return signal.Signals(-self.code).name
        except ValueError:
            return f"signal {-self.code}"


class ChildProcess:
    """A Python child whose original stdin and stdout are its protocol pipes
    (:func:`~vis_core.system.child_process.take_protocol_fds` on its side), in a session and
    process group of its own, its stderr logged line by line; it ends with Vis
    (:func:`~vis_core.system.child_process.exit_with_parent` on its side)."""

    def __init__(
        self,
        target: str,
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        python: str = sys.executable,
        stderr: Callable[[str], None] | None = None,
    ) -> None:
        """Start ``target`` (``"package.module:function"``) of this Vis in an isolated
        ``python`` (``-I``; ``-B``: no ``.pyc`` files written beside entry files) with exactly
        ``env``; each line it prints to stderr goes to ``stderr`` (default: the log)."""
        self.process = subprocess.Popen(
            python_argv(python, target, "-B"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=None if cwd is None else str(cwd),
            start_new_session=True,
        )
        self.pid = self.process.pid
        assert self.process.stderr is not None
        threading.Thread(
            target=_drain,
            args=(self.process.stderr, stderr or _log_line),
            name="vis-child-stderr",
            daemon=True,
        ).start()

    @property
    def read_fd(self) -> int:
        """The end of the child's stdout the host reads."""
        assert self.process.stdout is not None
        return self.process.stdout.fileno()

    @property
    def write_fd(self) -> int:
        """The end of the child's stdin the host writes."""
        assert self.process.stdin is not None
        return self.process.stdin.fileno()

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL to the child's process group: what it started in it ends too."""
        if self.process.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()

    def ending(self, linger: float = LINGER) -> Ending:
        """Wait for the child to end (it closed its pipe): one that lingers ``linger``
        seconds more is killed."""
        try:
            code = self.process.wait(linger)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        return Ending(code)

    def close(self) -> Ending:
        """Kill the child if it runs, wait for it and close the host's ends of its pipes."""
        self.kill()
        code = self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    continue  # a broken pipe to a killed process: nothing left to flush
        return Ending(code)


def _log_line(line: str) -> None:
    log.info("extension worker: %s", line)


def _drain(stream: IO[bytes], sink: Callable[[str], None]) -> None:
    """Hand each line the child prints to ``sink``, so its stderr pipe never fills."""
    with stream:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                sink(line)
