"""`vis export` tells a turn cut off by a killed Vis from one a running Vis holds: by the
session's lock, held by whichever process has the session open."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vis_core.store.session_lock import SessionLocks, session_held

HOLD = """
import sys
from pathlib import Path
from vis_core.store.session_lock import SessionLocks
SessionLocks(Path(sys.argv[1])).acquire("s1")
print("held", flush=True)
sys.stdin.read()
"""


def test_a_session_is_held_while_a_vis_has_it_open_and_not_after_it_died(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    assert not session_held(folder, "s1")  # never opened: no lock file
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert session_held(folder, "s1")
        assert not session_held(folder, "s2")
    finally:
        holder.kill()  # as kill -9: the lock goes with the process
        holder.wait(timeout=10)
    assert not session_held(folder, "s1")
    locks = SessionLocks(folder)  # this process holds it: held too, and the probe keeps it
    locks.acquire("s1")
    assert session_held(folder, "s1") and session_held(folder, "s1")
    locks.release("s1")
    assert not session_held(folder, "s1")
