"""The jail's seccomp filter: nothing a jailed process makes or changes gets a set-user-ID or
set-group-ID bit."""

from __future__ import annotations

import functools
import logging
import os
import platform
import struct
from collections.abc import Sequence

log = logging.getLogger(__name__)

# The workspace is bound nosuid inside the jail, but a mode bit is written to the file itself,
# which the host sees owned by Vis's user (root in a container): any local user who can reach
# the workspace would run a set-user-ID copy of python3 as that user. So the kernel refuses
# every mode holding these bits; sticky (S_ISVTX) stays allowed: Linux ignores it on files,
# and on a folder it only narrows who may delete there.
SPECIAL_BITS = 0o6000
# The argument holding the mode, for each system call that sets one (``open``'s is ignored
# without ``O_CREAT``, and refused all the same: a caller passes 0 or 0o666 there).
MODE_ARGUMENT = {
    "chmod": 1,
    "fchmod": 1,
    "fchmodat": 2,
    "fchmodat2": 2,
    "creat": 1,
    "open": 2,
    "openat": 3,
    "mknod": 1,
    "mknodat": 2,
}
# Calls whose mode the filter cannot read: ``openat2`` keeps it in a struct, io_uring's opens
# bypass seccomp. Both answer ENOSYS, on which their callers fall back to ``openat``.
UNREADABLE = ("openat2", "io_uring_setup")
# Kernel ABIs (AUDIT_ARCH_*) and their numbers for the calls above; 452 is fchmodat2 (6.6).
X86_64, I386 = 0xC000003E, 0x40000003
GENERIC = {"fchmod": 52, "fchmodat": 53, "openat": 56, "mknodat": 33}
SYSCALLS: dict[int, dict[str, int]] = {
    X86_64: {
        **{"chmod": 90, "fchmod": 91, "fchmodat": 268, "creat": 85, "open": 2, "openat": 257},
        **{"mknod": 133, "mknodat": 259},
    },
    I386: {
        **{"chmod": 15, "fchmod": 94, "fchmodat": 306, "creat": 8, "open": 5, "openat": 295},
        **{"mknod": 14, "mknodat": 297},
    },
    0xC00000B7: GENERIC,  # aarch64
    0xC00000F3: GENERIC,  # riscv64
    0xC0000102: GENERIC,  # loongarch64
}
COMMON = {"fchmodat2": 452, "openat2": 437, "io_uring_setup": 425}
# The ABIs a process may use on each machine; another one (x32, 32-bit ARM) is killed.
MACHINES = {
    "x86_64": (X86_64, I386),
    "amd64": (X86_64, I386),
    "aarch64": (0xC00000B7,),
    "arm64": (0xC00000B7,),
    "riscv64": (0xC00000F3,),
    "loongarch64": (0xC0000102,),
}
X32_BIT = 0x40000000  # x32's calls arrive as x86_64's with this bit set

# classic BPF, as seccomp runs it on struct seccomp_data (nr, arch, ip, args[6])
LOAD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
NR, ARCH = 0, 4
ALLOW, KILL = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | 1, 0x00050000 | 38  # SECCOMP_RET_ERRNO with the errno

Step = tuple[int, int | str, int | str, int]


def _assemble(program: Sequence[Step | str]) -> bytes:
    """``program`` (steps and the labels their jumps name) as ``struct sock_filter`` bytes."""
    labels: dict[str, int] = {}
    steps: list[Step] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(steps)
        else:
            steps.append(item)
    out = bytearray()
    for at, (code, true, false, k) in enumerate(steps):
        jumps = [j if isinstance(j, int) else labels[j] - at - 1 for j in (true, false)]
        assert all(0 <= j <= 255 for j in jumps), "a jump too far for classic BPF"
        out += struct.pack("=HBBI", code, *jumps, k)
    return bytes(out)


def filter_program(arches: Sequence[int]) -> bytes:
    """The filter for processes of the ABIs ``arches``: EPERM for a mode with
    :data:`SPECIAL_BITS`, ENOSYS for :data:`UNREADABLE` calls (and x32's), death for another
    ABI, every other call allowed."""
    program: list[Step | str] = [(LOAD, 0, 0, ARCH)]
    program += [(JEQ, f"abi{arch}", 0, arch) for arch in arches]
    program.append((RET, 0, 0, KILL))
    for arch in arches:
        numbers = {**SYSCALLS[arch], **COMMON}
        program += [f"abi{arch}", (LOAD, 0, 0, NR)]
        if arch == X86_64:
            program.append((JGE, "nosys", 0, X32_BIT))
        program += [(JEQ, "nosys", 0, numbers[name]) for name in UNREADABLE]
        for name, number in numbers.items():
            if name in MODE_ARGUMENT:  # args[i]'s low word, little-endian
                program += [(JEQ, 0, 3, number), (LOAD, 0, 0, 16 + 8 * MODE_ARGUMENT[name])]
                program += [(JSET, "eperm", 0, SPECIAL_BITS), (RET, 0, 0, ALLOW)]
        program.append((RET, 0, 0, ALLOW))
    program += ["nosys", (RET, 0, 0, ENOSYS), "eperm", (RET, 0, 0, EPERM)]
    return _assemble(program)


@functools.cache
def machine_filter() -> bytes | None:
    """The filter for this machine; None where Vis knows none (big-endian or another
    processor), said once in the log."""
    arches = MACHINES.get(platform.machine().lower()) if struct.pack("=H", 1) == b"\1\0" else None
    if arches is None:
        log.warning(
            "the jail has no set-user-ID filter for this processor (%s): a jailed block can "
            "leave a set-user-ID file in the workspace",
            platform.machine(),
        )
        return None
    return filter_program(arches)


def guarded(argv: list[str]) -> tuple[list[str], int | None]:
    """The bubblewrap command ``argv`` with the filter for everything it starts, and the file
    descriptor bubblewrap reads it from (a pipe holding it whole), to pass to the child and
    close once it started; ``argv`` and None where there is no filter."""
    program = machine_filter()
    if program is None:
        return argv, None
    read, write = os.pipe()
    try:
        os.write(write, program)  # a few hundred bytes: the pipe holds them
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return [argv[0], "--seccomp", str(read), *argv[1:]], read
