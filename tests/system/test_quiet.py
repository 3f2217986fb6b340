"""Two holders of ``model_stopped`` at once (an editor's file call under ``vis acp`` and git
in a draft): the first to leave must not continue what the other still holds stopped."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from vis_core.system.jail_check import jail_problem
from vis_core.system.quiet import held_processes, model_stopped

pytestmark = pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _jailed_spinner() -> subprocess.Popen[bytes]:
    """A process in a PID namespace of its own below this one, running until killed."""
    argv = ["bwrap", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/"]
    spinner = subprocess.Popen([*argv, "sh", "-c", "while :; do :; done"])
    deadline = time.monotonic() + 30
    while not held_processes() and time.monotonic() < deadline:
        time.sleep(0.01)  # until bwrap has made the namespace's first process
    return spinner


def test_the_first_to_leave_does_not_continue_what_the_other_holds() -> None:
    spinner = _jailed_spinner()
    try:
        first_in, leave = threading.Event(), threading.Event()
        seen: list[str] = []

        def first() -> None:
            with model_stopped():
                first_in.set()
                leave.wait(10)

        holder = threading.Thread(target=first)
        holder.start()
        first_in.wait(10)
        with model_stopped():
            leave.set()
            holder.join(10)  # the first holder has left
            seen.append(_state(spinner.pid))
        assert seen == ["T"]
        assert _state(spinner.pid) != "T"  # continued once both have left
    finally:
        spinner.kill()
        spinner.wait()
