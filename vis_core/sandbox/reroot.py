"""Move a running jail onto a new writable root (a session entering its draft mid-block):
the old root becomes read-only inside the jail at once, the new one writable.

Bubblewrap fixes its mounts when the jail starts, and a process in it holds no capability to
change them. Vis (the jail's parent, owner of its user namespace) changes them from outside:
a short helper enters the jail's mount namespace and remounts. A file of the old root still
open for writing makes the remount fail (the kernel refuses, EBUSY): the caller then stops
the jail, so nothing written later in the block can reach the old root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HELPER_TIMEOUT = 10.0

# Runs in a fresh single-threaded interpreter (setns into a user namespace needs one).
_HELPER = r"""
import ctypes, fcntl, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_void_p]
CLONE_NEWNS, CLONE_NEWUSER, NS_GET_USERNS = 0x20000, 0x10000000, 0xB701
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384
KEPT = ((os.ST_NOSUID, 2), (os.ST_NODEV, 4), (os.ST_NOEXEC, 8), (os.ST_NOATIME, 1024),
        (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21))

def check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")

def remount(path, read_only):
    have = os.statvfs(path).f_flag  # the flags a user namespace may not drop stay as they are
    flags = MS_REMOUNT | MS_BIND | (MS_RDONLY if read_only else 0)
    for st, ms in KEPT:
        if have & st:
            flags |= ms
    check(libc.mount(None, path.encode(), None, flags, None), f"remount {path}")

def bind(path, recursive=False):
    flags = MS_BIND | (MS_REC if recursive else 0)
    check(libc.mount(path.encode(), path.encode(), None, flags, None), f"bind {path}")

pid, plan = int(sys.argv[1]), json.loads(sys.argv[2])
mnt = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
if os.fstat(mnt).st_ino == os.stat("/proc/self/ns/mnt").st_ino:
    raise OSError(f"process {pid} is not in a jail of its own")  # never remount Vis's own
if os.geteuid() != 0:  # enter the user namespace that owns the jail's mounts first
    check(libc.setns(fcntl.ioctl(mnt, NS_GET_USERNS), CLONE_NEWUSER), "enter the user namespace")
check(libc.setns(mnt, CLONE_NEWNS), "enter the mount namespace")
for path in plan["read_only"]:
    remount(path, True)
# The protected names first, while the new root is still read-only (nothing in the jail can
# rename them meanwhile); then the new root bound with them (MS_REC) and made writable: by
# then each is a mount point of its own, read-only, which no block can rename or replace.
for path in plan["protected"]:
    bind(path)
    remount(path, True)
for path in plan["writable"]:
    bind(path, recursive=True)
    remount(path, False)
"""


class RerootFailed(RuntimeError):
    """The jail could not be moved; its caller must stop it."""


def writable_mounts(pid: int, root: Path, keep: Path) -> list[str]:
    """The mount points of ``pid``'s jail at or beneath ``root`` that are writable (not
    those at or beneath ``keep``), deepest last."""
    found: list[str] = []
    text = Path(f"/proc/{pid}/mountinfo").read_text()
    for line in text.splitlines():
        fields = line.split()
        point = _unescape(fields[4])
        options = fields[5].split(",")
        if "rw" not in options:
            continue
        where = Path(point)
        if where.is_relative_to(root) and not where.is_relative_to(keep):
            found.append(point)
    return found


def reroot(pid: int, old_root: Path, new_root: Path, protected: list[Path]) -> None:
    """Inside the jail of process ``pid`` (a host pid): every writable mount at or beneath
    ``old_root`` read-only, then ``new_root`` (visible there already, read-only) writable
    with ``protected`` paths in it read-only. Raises :class:`RerootFailed`."""
    old, new = old_root.resolve(), new_root.resolve()
    try:
        plan = {
            "read_only": writable_mounts(pid, old, new),
            "writable": [str(new)],
            "protected": [str(p) for p in protected if os.path.lexists(p)],
        }
    except (OSError, IndexError) as exc:
        raise RerootFailed(f"the jail's mounts could not be read: {exc}") from exc
    argv = [sys.executable, "-I", "-S", "-c", _HELPER, str(pid), json.dumps(plan)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=HELPER_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RerootFailed(str(exc)) from exc
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RerootFailed(lines[-1] if lines else f"exit {done.returncode}")


def _unescape(text: str) -> str:
    """A mountinfo field: spaces, tabs, newlines and backslashes are octal escapes."""
    for code in ("\\040", "\\011", "\\012", "\\134"):
        text = text.replace(code, chr(int(code[1:], 8)))
    return text
