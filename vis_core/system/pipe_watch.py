"""Stop a command of Vis's (git, ripgrep) at once when it waits on a named pipe or reads a
huge rules file.

git and ripgrep read their rules from files a checkout controls (every ``.gitignore``,
``.rgignore`` and ``.gitattributes``, ``.git/config`` and what it includes,
``.git/info/exclude``, the files ``core.excludesFile`` and ``core.attributesFile`` name).
When one of them is a named pipe, the program's ``open()`` waits for a writer that never
comes. While such a command runs, Vis looks at its processes now and then: one waiting in the
kernel's pipe-open wait is stopped, and the error names the pipe (read from the process's own
open call), so the person can remove it. So is one reading a ``.gitignore`` (or another rules
file) above :data:`RULES_LIMIT`: both read one whole, and a sparse terabyte costs a block
nothing to make.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import platform
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vis_core.system.child_process import killed_with_parent, on_lasting_thread
from vis_core.system.programs import host_program

WATCH_SECONDS = 0.2  # between two looks at a git command still running
PIPE_WAIT = "wait_for_partner"  # the kernel function a named pipe's open() waits in
# The number of ``openat`` on the machines Vis runs on (glibc's open() is openat).
_OPENAT = {"x86_64": 257, "aarch64": 56, "riscv64": 56}
AT_FDCWD = -100


RULES_LIMIT = 100 << 20  # git's own bound on an attributes file; a sparse one costs nothing
RULE_FILES = frozenset({".gitignore", ".gitattributes", ".rgignore", ".ignore"})


class Stuck(OSError):
    """Vis stopped the command: it waited on a named pipe, or read a huge rules file."""

    def __init__(self, path: str | None, size: int | None = None) -> None:
        self.path, self.size = path, size
        where = f", {path}" if path else ""
        super().__init__(
            f"it waited on a named pipe{where}"
            if size is None
            else f"it read {path}, a file of rules of {size / (1 << 30):.1f} GiB"
        )


def huge_rules(tree: Sequence[int]) -> Stuck | None:
    """A rules file (a ``.gitignore``…) above :data:`RULES_LIMIT` that a process of ``tree``
    has open: git and ripgrep read one whole, a sparse terabyte as well."""
    for pid in tree:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if os.path.basename(target) in RULE_FILES:
                        size = os.stat(f"/proc/{pid}/fd/{fd}").st_size
                        if size > RULES_LIMIT:
                            return Stuck(target, size)
    return None


def stuck(root: int) -> Stuck | None:
    """Why ``root``'s command would wait for ever or read without end, or None."""
    from vis_core.system.keeper import descendants

    tree = (root, *descendants(root))
    waiter = waiting_on_pipe(tree)
    if waiter is not None:
        return Stuck(opened_path(waiter))
    return huge_rules(tree)


def waiting_on_pipe(tree: Sequence[int]) -> str | None:
    """A thread of a process of ``tree`` that waits to open a named pipe, as its ``/proc``
    folder (``/proc/PID/task/TID``), or None. ripgrep reads rules in threads."""
    for pid in tree:
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    with open(f"/proc/{pid}/task/{tid}/wchan") as file:
                        if file.read().strip() == PIPE_WAIT:
                            return f"/proc/{pid}/task/{tid}"
    return None


def opened_path(thread: str) -> str | None:
    """The absolute path the thread at ``/proc/PID/task/TID`` is opening (its ``openat``
    call), or None when ``/proc`` does not say (another call, another machine, no access)."""
    try:
        with open(f"{thread}/syscall") as file:
            fields = file.read().split()
        if int(fields[0]) != _OPENAT.get(platform.machine(), -1):
            return None
        folder, address = int(fields[1], 16), int(fields[2], 16)
        with open(f"{thread}/mem", "rb") as memory:
            memory.seek(address)
            name = os.fsdecode(memory.read(4096).split(b"\0", 1)[0])
        if folder & 0xFFFFFFFF == AT_FDCWD & 0xFFFFFFFF:
            base = os.readlink(f"{thread}/cwd")
        else:
            base = os.readlink(f"{thread}/fd/{folder}")
    except (OSError, ValueError, IndexError):
        return None
    return os.path.normpath(os.path.join(base, name))


def refusal(command: str, why: Stuck) -> str:
    """Why Vis stopped ``command``, and what to do."""
    path = why.path
    if why.size is not None:
        return (
            f"{command} was stopped: {why}, which it would read whole (above "
            f"{RULES_LIMIT >> 20} MiB). Remove it or make it smaller (rm '{path}'), then try again."
        )
    return (
        f"{command} was stopped: {why}, which it reads as a file of rules "
        "(a .gitignore, .rgignore, .gitattributes, .git/config, .git/info/exclude or a file "
        "git's configuration names) and would wait on forever. Remove the pipe"
        + (f" (rm '{path}')" if path else "")
        + ", then try again."
    )


async def stuck_at(pid: int) -> Stuck:
    """Return once ``pid``'s command waits on a named pipe or reads a huge rules file: why."""
    while True:
        await asyncio.sleep(WATCH_SECONDS)
        if (why := stuck(pid)) is not None:
            return why


def run_watched(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: dict[str, str],
    timeout: float,
    feed: bytes | None = None,
    take: Callable[[bytes], None] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``argv`` run to its end with ``feed`` on its input (else none), in a session of its own,
    killed by the kernel if Vis dies first (:func:`ended_with_vis`). With ``take`` (no
    ``feed``), its output is given to it piece by piece as it comes, not kept (the result's
    ``stdout`` is empty): what ``take`` raises, to stop a listing too big to hold, ends the
    command and is raised here.
    Raises :class:`Stuck` (the command killed) when one of its processes waits to open a
    named pipe or reads a huge rules file, ``subprocess.TimeoutExpired`` after ``timeout``
    seconds, ``OSError`` when it cannot start."""
    command, setup = ended_with_vis(argv, Path(cwd))
    process = on_lasting_thread(
        lambda: subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if feed is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=setup,
        )
    )
    deadline = time.monotonic() + timeout
    pending = feed
    if take is not None:
        with process:
            try:
                err = _streamed(process, take, deadline, timeout)
            except BaseException:
                _kill(process)
                raise
            return subprocess.CompletedProcess(list(argv), process.returncode, b"", err)
    with process:
        while True:
            left = deadline - time.monotonic()
            try:
                out, err = process.communicate(pending, timeout=max(0.0, min(WATCH_SECONDS, left)))
                return subprocess.CompletedProcess(list(argv), process.returncode, out, err)
            except subprocess.TimeoutExpired:
                pending = None  # given once; communicate() keeps what it has not written
                why = stuck(process.pid)
                if why is None and left > WATCH_SECONDS:
                    continue
                _kill(process)
                if why is not None:
                    raise why from None
                raise subprocess.TimeoutExpired(list(argv), timeout) from None


ERR_KEPT = 1 << 20  # of a streamed command's error output; the rest is dropped


def _streamed(
    process: subprocess.Popen[bytes], take: Callable[[bytes], None], deadline: float, timeout: float
) -> bytes:
    """Give ``process``'s output to ``take`` as it comes until it ends; its error output
    (up to :data:`ERR_KEPT`). Raises as :func:`run_watched` does, the process left running."""
    assert process.stdout is not None and process.stderr is not None
    err = bytearray()
    with selectors.DefaultSelector() as pipes:
        pipes.register(process.stdout, selectors.EVENT_READ)
        pipes.register(process.stderr, selectors.EVENT_READ)
        look = time.monotonic() + WATCH_SECONDS
        while pipes.get_map():
            now = time.monotonic()
            if now >= look:
                if (why := stuck(process.pid)) is not None:
                    raise why
                look = now + WATCH_SECONDS
            if now >= deadline:
                raise subprocess.TimeoutExpired(process.args, timeout)
            for key, _ in pipes.select(min(look, deadline) - now):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    pipes.unregister(key.fileobj)
                elif key.fileobj is process.stdout:
                    take(data)
                else:
                    err += data[: ERR_KEPT - len(err)]
    process.wait(max(0.0, deadline - time.monotonic()))
    return bytes(err)


def ended_with_vis(argv: Sequence[str], cwd: Path) -> tuple[list[str], Callable[[], None] | None]:
    """``argv`` and a ``preexec_fn`` by which the kernel kills the command when Vis dies
    (``PR_SET_PDEATHSIG``, as :class:`~vis_core.system.process.ChildProcess` ends its children;
    start it through :func:`~vis_core.system.child_process.on_lasting_thread`): the command
    run by ``setpriv --pdeathsig`` (util-linux), which sets it before the exec, so the child
    starts by vfork, whose cost does not grow with Vis's memory; where there is none, the
    same set by a ``preexec_fn`` (a fork: ~15 ms of Vis's CPU at 300 MB resident)."""
    if not sys.platform.startswith("linux"):
        return list(argv), None
    setpriv = _setpriv(cwd, os.environ.get("PATH", ""))
    if setpriv is None:
        return list(argv), killed_with_parent()
    return [setpriv, "--pdeathsig", "KILL", "--", *argv], None


@functools.lru_cache(maxsize=64)
def _setpriv(cwd: Path, path: str) -> str | None:
    """``setpriv`` found outside ``cwd`` on ``path`` (``PATH``), looked up once for both;
    None when it has no ``--pdeathsig`` (util-linux before 2.33)."""
    found = host_program("setpriv", (cwd,))
    return found if found is not None and _has_pdeathsig(found) else None


@functools.cache
def _has_pdeathsig(setpriv: str) -> bool:
    try:
        done = subprocess.run([setpriv, "--help"], capture_output=True, env={}, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--pdeathsig" in done.stdout


def _kill(process: subprocess.Popen[bytes]) -> None:
    """End the command's session (git and what it started), and reap it."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    process.kill()
    process.communicate()
