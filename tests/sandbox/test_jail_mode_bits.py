"""The jail's seccomp filter, tried from a real jailed block: no set-user-ID or set-group-ID
file or folder is left in the workspace, which the host sees owned by Vis's user."""

from __future__ import annotations

import os
import platform
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from vis_core.system.shell import ShellManager

from .hostile import BWRAP_PROBLEM, run_blocks

jailed = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))

# What the kernel answers to the calls whose mode the filter cannot read (run by python3 in a
# jailed shell: the sandbox itself refuses ctypes).
RAW_CALLS = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ring = ctypes.create_string_buffer(120)
for name, number, args in (("openat2", 437, (-100, b"made2", ring, 24)),
                           ("io_uring_setup", 425, (8, ring))):
    print(name, libc.syscall(number, *args), ctypes.get_errno())
"""

BLOCK = """
import os, stat
sh = await shell(
    "cp /usr/bin/python3 ./tool && chmod 4755 ./tool; echo tool=$?; "
    "mkdir shared && chmod 2777 shared; echo shared=$?; python3 raw.py"
)
print((await sh.wait(60)).output)
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = "done"
    except OSError as exc:
        results[name] = exc.strerror
fd = os.open("tool", os.O_RDONLY)
attempt("chmod", lambda: os.chmod("tool", 0o6755))
attempt("fchmod", lambda: os.fchmod(fd, 0o4755))
attempt("create", lambda: os.close(os.open("made", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("mknod", lambda: os.mknod("node", stat.S_IFREG | 0o2755))
attempt("plain", lambda: os.chmod("tool", 0o700))
attempt("sticky", lambda: os.chmod("shared", 0o1777))
print(results)
"""


def special(root: Path) -> list[str]:
    """Every path below ``root`` whose mode holds a set-user-ID or set-group-ID bit."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            if os.lstat(os.path.join(folder, name)).st_mode & (stat.S_ISUID | stat.S_ISGID):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


@jailed
async def test_a_jailed_block_cannot_leave_a_set_user_id_file(
    workspace: Path, tmp_path: Path
) -> None:
    """The tester's attack: a copy of python3 made set-user-ID in the workspace ran as Vis's
    user (root here) for any local user. The kernel now refuses the bit (and set-group-ID,
    on a folder too) to every way a jailed process sets a mode, and the two calls whose mode
    it cannot read answer ENOSYS; plain modes and the sticky bit still work."""
    (workspace / "raw.py").write_text(RAW_CALLS)
    outcome = await run_blocks(workspace, tmp_path, BLOCK)
    [block] = outcome.blocks
    assert block.error is None, block.error
    out = block.stdout
    assert "chmod: changing permissions of './tool': Operation not permitted" in out
    assert "tool=1" in out and "shared=1" in out
    assert "openat2 -1 38" in out and "io_uring_setup -1 38" in out
    refused = "Operation not permitted"
    expected = {"chmod": refused, "fchmod": refused, "create": refused, "mknod": refused}
    assert str({**expected, "plain": "done", "sticky": "done"}) in out
    assert special(workspace) == []
    assert stat.S_IMODE((workspace / "tool").stat().st_mode) == 0o700
    assert stat.S_IMODE((workspace / "shared").stat().st_mode) == 0o1777
    assert not (workspace / "made").exists() and not (workspace / "node").exists()


# chmod(argv[1], argv[2]) through the 32-bit x86 entry (int 0x80, call 15) from a 64-bit
# process: what the kernel answers (0, or -errno).
INT80_CHMOD = r"""
import ctypes, mmap, struct, sys
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
MAP_32BIT = 0x40  # the path's address must fit in ebx
page = libc.mmap(None, 4096, 7, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_32BIT, -1, 0)
path = sys.argv[1].encode() + b"\0"
ctypes.memmove(page + 1024, path, len(path))
code = (b"\x53\xb8" + struct.pack("<I", 15) + b"\xbb" + struct.pack("<I", page + 1024)
        + b"\xb9" + struct.pack("<I", int(sys.argv[2], 8)) + b"\xcd\x80\x5b\xc3")
ctypes.memmove(page, code, len(code))  # push rbx; eax, ebx, ecx; int 0x80; pop rbx; ret
print("answer", ctypes.CFUNCTYPE(ctypes.c_int)(page)())
"""


def _int80_works(tmp_path: Path) -> bool:
    """Whether this kernel runs 32-bit x86 calls (``ia32_emulation``), tried unjailed."""
    if platform.machine() != "x86_64":
        return False
    probe, target = tmp_path / "int80.py", tmp_path / "probe"
    probe.write_text(INT80_CHMOD)
    target.write_text("")
    done = subprocess.run(
        [sys.executable, str(probe), str(target), "600"], capture_output=True, text=True
    )
    return done.stdout.strip() == "answer 0" and stat.S_IMODE(target.stat().st_mode) == 0o600


@jailed
async def test_the_32_bit_entry_is_filtered_too(workspace: Path, tmp_path: Path) -> None:
    """A 64-bit process may call the kernel through the 32-bit x86 entry, whose calls have
    other numbers: the filter knows them as well."""
    if not _int80_works(tmp_path):
        pytest.skip("no 32-bit x86 system calls here")
    (workspace / "int80.py").write_text(INT80_CHMOD)
    (workspace / "tool").write_text("")
    manager = ShellManager()
    try:
        handle = await manager.start(
            "python3 int80.py tool 4755; python3 int80.py tool 750",
            cwd=workspace,
            output_dir=tmp_path / "out",
            jail_workspace=workspace,
        )
        status = await handle.wait(60)
    finally:
        await manager.close_all()
    assert status.output.split("\n")[:2] == ["answer -1", "answer 0"], status.output
    assert stat.S_IMODE((workspace / "tool").stat().st_mode) == 0o750
