"""The pid the sandbox host signals on Esc is always one of its own child's tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from vis_core.sandbox.host import host_pid


def test_a_pid_outside_the_childs_tree_is_never_taken() -> None:
    outer = subprocess.Popen(
        [sys.executable, "-c", "import subprocess,sys; subprocess.run(['sleep', '30'])"]
    )
    try:
        inner = None
        for _ in range(500):  # the grandchild appears once the child has started it
            try:
                with open(f"/proc/{outer.pid}/task/{outer.pid}/children") as f:
                    found = f.read().split()
            except OSError:
                found = []
            if found:
                inner = int(found[0])
                break
            subprocess.run(["true"])
        assert inner is not None
        assert host_pid(outer.pid, inner, namespaced=False) == inner
        # what a lying child might report: Vis itself, the person's shell, pid 1
        for foreign in (os.getpid(), os.getppid(), 1):
            assert host_pid(outer.pid, foreign, namespaced=False) is None
    finally:
        outer.kill()
        outer.wait()


def test_a_child_a_thread_started_is_found() -> None:
    """A process's children are listed by the thread that started each: one a thread other
    than the main one started is not in the main thread's list."""
    outer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, threading\n"
            "def start():\n"
            "    child = subprocess.Popen(['sleep', '30'])\n"
            "    print(child.pid, flush=True)\n"
            "    child.wait()\n"
            "threading.Thread(target=start).start()\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    inner = 0
    try:
        assert outer.stdout is not None
        inner = int(outer.stdout.readline())
        assert host_pid(outer.pid, inner, namespaced=False) == inner
    finally:
        if inner:
            os.kill(inner, signal.SIGKILL)
        outer.kill()
        outer.wait()
