"""Moving a running jail onto a new root refuses a process that shares Vis's mounts."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from vis_core.sandbox.reroot import RerootFailed, reroot


def test_a_process_outside_any_jail_is_never_remounted(tmp_path: Path) -> None:
    (tmp_path / "new").mkdir()
    with pytest.raises(RerootFailed, match="not in a jail of its own"):
        reroot(os.getpid(), tmp_path, tmp_path / "new", [])
    (tmp_path / "still-writable").write_text("yes\n")


NOBODY = 65534
SCENARIO = """
set -e
cd "$BASE"
mkfifo sync/ready sync/go
bwrap --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 \\
  --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp \\
  --bind "$BASE/live" "$BASE/live" --bind "$BASE/sync" "$BASE/sync" \\
  --tmpfs "$BASE/home" --ro-bind "$BASE/home/slot" "$BASE/home/slot" \\
  --unshare-user --unshare-pid --disable-userns --cap-drop ALL --die-with-parent \\
  --chdir "$BASE/live" -- /bin/sh -c '
    exec 3>"$0/sync/ready"; echo up >&3; read go < "$0/sync/go"
    echo late >> f 2>/dev/null && echo wrote-live
    echo drafted > "$0/home/slot/tree/g" && echo wrote-draft' "$BASE" &
read up < sync/ready
PID=$(pgrep -n -u {uid} -f "^/bin/sh -c")
/usr/bin/python3 -I -c '
import sys; sys.path.insert(0, sys.argv[1])
from pathlib import Path
from vis_core.sandbox import reroot
reroot.sys.executable = "/usr/bin/python3"
base = Path(sys.argv[3])
reroot.reroot(int(sys.argv[2]), base / "live", base / "home/slot/tree", [])
print("rerooted")' "$VIS" "$PID" "$BASE"
echo go > sync/go
wait
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("bwrap"),
    reason="needs root to become an ordinary user (setpriv) and bubblewrap",
)
def test_an_ordinary_users_jail_is_moved_as_well() -> None:
    """Not root: Vis enters the user namespace that owns the jail's mounts (bubblewrap
    nests one more for --disable-userns) and remounts there."""
    base = Path(tempfile.mkdtemp(prefix="vis-reroot-", dir="/tmp"))
    try:
        for folder in ("live", "sync", "home/slot/tree"):
            (base / folder).mkdir(parents=True)
        (base / "live" / "f").write_text("live\n")
        for path in [base, *base.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
        base.chmod(0o755)
        vis = str(Path(__file__).resolve().parents[2])
        done = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
            + ["bash", "-c", SCENARIO.replace("{uid}", str(NOBODY))],
            env={"BASE": str(base), "VIS": vis, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        if "Permission denied" in done.stderr and "rerooted" not in done.stdout:
            pytest.skip(f"an ordinary user cannot run this here: {done.stderr.strip()}")
        assert done.stdout.split() == ["rerooted", "wrote-draft"], done.stderr
        assert (base / "live" / "f").read_text() == "live\n"
        assert (base / "home" / "slot" / "tree" / "g").read_text() == "drafted\n"
    finally:
        shutil.rmtree(base)
