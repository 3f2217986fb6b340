"""The supervisor of Vis's Python children: isolated start, stderr drained, kill, and how the
child ended (the texts the workers and the sandbox build from it stay as the tests expect)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from processes import alive

from vis_core.system.process import ChildProcess, Ending


def test_how_a_child_ended() -> None:
    assert Ending(0).signal is None and Ending(3).signal is None
    assert Ending(-11).signal == "SIGSEGV" and Ending(-9).signal == "SIGKILL"
    assert Ending(-200).signal == "signal 200"
    assert Ending(None).signal is None
    said = [str(Ending(code)) for code in (3, -9, -11, None)]  # one wording for every child
    assert said == ["exited with code 3", "was killed (SIGKILL)", "crashed (SIGSEGV)", "ended"]


def test_a_crash_is_told_by_its_signal(tmp_path: Path) -> None:
    child = ChildProcess("faulthandler:_sigsegv", env={}, cwd=tmp_path)
    assert child.ending(30).signal == "SIGSEGV"
    child.close()


def test_stderr_reaches_the_sink_and_kill_ends_the_child(tmp_path: Path) -> None:
    lines: list[str] = []
    seen = threading.Event()

    def sink(line: str) -> None:
        lines.append(line)
        seen.set()

    child = ChildProcess("code:interact", env={"PATH": os.defpath}, cwd=tmp_path, stderr=sink)
    assert seen.wait(30)  # the interpreter's banner, on stderr
    assert child.running
    child.kill()
    assert child.close() == Ending(-9)
    assert not child.running and any("Python" in line for line in lines)


def test_a_module_in_the_working_folder_never_runs(tmp_path: Path) -> None:
    (tmp_path / "code.py").write_text("raise SystemExit(7)\n")
    (tmp_path / "faulthandler.py").write_text("raise SystemExit(7)\n")
    child = ChildProcess("faulthandler:_sigsegv", env={"PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
    assert child.ending(30) == Ending(-11)  # the standard library's, not the checkout's
    child.close()


# The host starts a session worker from a thread that ends at once (a parent-death signal
# would follow that thread), and forks a holder of the worker's pipes: the end of the pipe
# cannot tell the worker that the host is gone, only its watch of its parent can.
HOST = """
import os, threading, time
from vis_core.extension_host.registration import WORKER
from vis_core.system.process import ChildProcess
started = []
thread = threading.Thread(target=lambda: started.append(ChildProcess(WORKER, env={}, cwd=None)))
thread.start()
thread.join()
holder = os.fork()
if holder == 0:
    os.setsid()
    time.sleep(300)
    os._exit(0)
print(started[0].pid, holder, flush=True)
time.sleep(300)
"""


def _watches_a_pidfd(pid: int) -> bool:
    try:
        return any(
            os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[pidfd]"
            for fd in os.listdir(f"/proc/{pid}/fd")
        )
    except OSError:
        return False


@contextlib.contextmanager
def _host_with_a_worker(folder: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A running ``HOST`` and its worker's pid; all three processes are gone afterwards."""
    host = subprocess.Popen(
        [sys.executable, "-c", HOST], stdout=subprocess.PIPE, text=True, cwd=folder
    )
    assert host.stdout is not None
    worker, holder = (int(pid) for pid in host.stdout.readline().split())
    try:
        yield host, worker
    finally:
        host.kill()
        host.wait()
        for pid in (worker, holder):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _ends_with(host: subprocess.Popen[str], worker: int) -> bool:
    """Kill ``host`` with SIGKILL; whether ``worker`` is gone within a minute."""
    host.kill()
    host.wait()
    deadline = time.monotonic() + 60
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(worker)


def _started(worker: int) -> None:
    """Wait until ``worker`` watches its host (its start, the parent-death signal it asks the
    kernel for first thing included, is over)."""
    deadline = time.monotonic() + 60
    while not _watches_a_pidfd(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _watches_a_pidfd(worker), "the worker never began to watch its host"


def test_a_worker_dies_with_its_host_killed_by_sigkill(tmp_path: Path) -> None:
    with _host_with_a_worker(tmp_path) as (host, worker):
        _started(worker)
        assert _ends_with(host, worker), "the worker outlived its host"


def test_a_worker_whose_python_cannot_run_still_dies_with_its_host(tmp_path: Path) -> None:
    """A stopped worker (as one whose thread holds the GIL in a C loop, ``sum(range(10**13))``)
    cannot run its own watch of the host: the kernel's parent-death signal ends it. It is
    not sent when the short-lived thread that asked for the worker ends."""
    with _host_with_a_worker(tmp_path) as (host, worker):
        _started(worker)
        os.kill(worker, signal.SIGSTOP)
        assert alive(worker)  # the thread that started it has ended; it lives on
        assert _ends_with(host, worker), "a stopped worker outlived its host"
