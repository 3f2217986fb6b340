"""The supervisor of Vis's Python children: isolated start, stderr drained, kill, and how the
child ended (the texts the workers and the sandbox build from it stay as the tests expect)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from vis_core.ipc.process import ChildProcess, Ending


def test_how_a_child_ended() -> None:
    assert Ending(0).signal is None and Ending(3).signal is None
    assert Ending(-11).signal == "SIGSEGV" and Ending(-9).signal == "SIGKILL"
    assert Ending(-200).signal == "signal 200"
    assert Ending(None).signal is None


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
