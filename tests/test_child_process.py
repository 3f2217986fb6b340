"""The set-up every Vis child shares: protocol fds apart from stdio, and exit with the parent."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from processes import alive

from vis_core.system.child_process import python_argv

# The grandchild keeps the protocol fds, prints around them, then outlives its parent.
GRANDCHILD = """
import os, sys, time
from vis_core.system.child_process import exit_with_parent, take_protocol_fds
fds = take_protocol_fds()
exit_with_parent(interval=300)  # no poll within the test: the pidfd tells the parent's end
os.write(1, b"stray output\\n")
os.write(fds.write, (str(os.getpid()) + " " + repr(os.read(0, 10)) + "\\n").encode())
time.sleep(60)
"""

# The parent starts the grandchild with its stdin/stdout as the protocol, relays the first
# protocol line, and exits without waiting.
PARENT = """
import subprocess, sys
child = subprocess.Popen(
    [sys.executable, "-c", sys.argv[1]],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(sys.argv[2], "wb"),
)
print(child.stdout.readline().decode().strip(), flush=True)
"""


def test_protocol_fds_are_apart_and_the_child_ends_with_its_parent(tmp_path) -> None:
    stderr = tmp_path / "stderr"
    out = subprocess.run(
        [sys.executable, "-c", PARENT, GRANDCHILD, str(stderr)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    pid, stdin_read = int(out[0]), out[1]
    assert stdin_read == "b''"  # fd 0 is /dev/null: code in the child cannot read the protocol
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the child outlived its parent"
    assert stderr.read_text() == "stray output\n"  # fd 1 writes land on stderr, not the protocol


def test_a_child_whose_starter_is_already_gone_ends_before_it_runs_anything() -> None:
    """A Python child started to die with its starter (``killed_with``) asks the kernel for that
    first thing; one whose parent is not the starter it names (gone, the child reparented)
    ends at once, before any of Vis's code runs."""
    theirs = subprocess.run(
        python_argv(sys.executable, "builtins:print", killed_with=os.getpid()),
        capture_output=True,
        timeout=60,
    )
    assert (theirs.returncode, theirs.stdout) == (0, b"\n")
    orphan = subprocess.run(
        python_argv(sys.executable, "builtins:print", killed_with=1),
        capture_output=True,
        timeout=60,
    )
    assert (orphan.returncode, orphan.stdout) == (137, b"")
