"""The jail's check, a jailed ``true`` once per process: started early, answered when asked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _fresh(code: str, env: dict[str, str] | None = None) -> list[str]:
    """What ``code`` prints, run by a new interpreter (the check is once per process)."""
    done = subprocess.run(
        [sys.executable, "-c", "from vis_core.system import jail_check\n" + code],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


ASKED = "print(repr(jail_check.jail_problem()))\n"


def test_the_check_started_early_runs_no_thread_of_its_own_and_answers_as_one_asked() -> None:
    """``check_in_background`` starts bubblewrap and returns; no thread of its own waits for
    it (one walked /etc for the jail's masks beside `vis run`'s imports, handing the GIL back
    and forth with them). The thread that starts Vis's children is the one it may add."""
    started, answer = _fresh(
        "import threading\n"
        "before = set(threading.enumerate())\n"
        "jail_check.check_in_background()\n"
        "print(sorted(t.name for t in set(threading.enumerate()) - before))\n" + ASKED
    )
    assert started in ("[]", "['vis-child-start']")
    assert answer == _fresh(ASKED)[0]


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv")
def test_a_check_begun_by_a_thread_that_ended_is_not_killed_with_it(tmp_path: Path) -> None:
    """bubblewrap's ``--die-with-parent`` kills it once the *thread* that started it ends: the
    check starts it from the thread that lasts as long as the process, so a check begun by a
    short-lived thread is not taken for a bubblewrap without ``--disable-userns`` (the killed
    probe's fallback), nor, there, for one that cannot create its namespaces. The bwrap here
    dies with its parent thread as the real one does, and answers after that thread ended."""
    (tmp_path / "bwrap").write_text("#!/bin/sh\nexec setpriv --pdeathsig KILL -- sleep 0.5\n")
    (tmp_path / "bwrap").chmod(0o755)
    found, answer, options = _fresh(
        "import threading, time\n"
        "print(jail_check.find_bwrap())\n"
        "def begin():\n"
        "    jail_check.check_in_background()\n"
        "    time.sleep(0.2)\n"  # its bwrap has set its parent-death signal by now
        "thread = threading.Thread(target=begin)\n"
        "thread.start()\n"
        "thread.join()\n" + ASKED + "print(jail_check.isolation()[-1])\n",
        env={**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"},
    )
    assert (found, answer, options) == (str(tmp_path / "bwrap"), "None", "--disable-userns")
