"""The pid the sandbox host signals on Esc is always one of its own child's tree."""

from __future__ import annotations

import os
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
