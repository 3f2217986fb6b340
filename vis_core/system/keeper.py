"""The keeper: owns one command's whole process tree and ends it when Vis goes, even by kill -9.

Run as a script (``python -I -S keeper.py FD MODE MEMORY PROCESSES -- ARGV...``), standard
library only. It applies the limits (``MEMORY`` bytes of data per process, ``PROCESSES`` of the
user; 0: none) to itself, so the whole tree has them, and becomes a child subreaper
(``PR_SET_CHILD_SUBREAPER``), so every process the command starts stays its descendant, also
one that calls ``setsid()`` or forks twice; it starts the command in a session of its own once
Vis writes on ``FD`` (Vis holds a command of the model's back while it acts on files the model
could change: :mod:`vis_core.system.quiet`), and then waits. ``FD`` is its end of a socket pair
whose other end only Vis holds: when it reads the end of it, Vis is gone and it kills every
descendant.

Vis talks to it with signals: SIGTERM is passed to every descendant, SIGUSR1 kills them all
(SIGKILL). The first process of a PID namespace (the jail's inner bubblewrap) drops a SIGTERM
sent from outside unless it handles it: such a one gets SIGKILL instead, which ends its
namespace, as the end of the outer bubblewrap would have (the inner one dies with it, unless the
outer one died before the inner one asked to); for ``STOP_WATCH`` seconds after a SIGTERM the
keeper looks again every ``STOP_POLL`` for one that appeared since. A signal that reaches the
command's process before it reset the keeper's handlers waits until it has (it is blocked across
the fork). It reports on ``FD``: ``exit CODE`` when the command itself ends, ``memory BYTES``
when the tree's memory went over ``MEMORY`` bytes (0: no limit), after which it kills the tree.
MODE ``sandbox``: the tree is killed as soon as the command ends; ``shell``: what the command
left running goes on until it ends or is stopped. The keeper then exits as the command did
(the same code, or the same signal).

MODE ``server`` (an MCP server the SDK starts; ``FD`` is ``-1``): no channel, so the command
starts at once, in the keeper's own process group (the SDK signals that group) with the
keeper's stderr; the keeper ends the tree when the command ends, and when its parent (Vis) is
gone, which it sees within ``PARENT_POLL``.
"""

from __future__ import annotations

import _signal as signal  # pyright: ignore[reportMissingImports]  # no enums: starts faster
import os
import resource
import select
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
MEMORY_POLL = 0.1  # seconds between two sums of the tree's memory
PARENT_POLL = 1.0  # seconds between two looks at the parent when nothing else wakes us
GIVE_UP = 5.0  # seconds of killing after which a process that will not die is left
STOP_WATCH = 5.0  # seconds after a SIGTERM during which new processes are looked at (see above)
STOP_POLL = 0.01  # seconds between two of those looks
# Found on first use, not at import: Vis imports this module for its process trees alone
# (:func:`tree`), and neither ctypes nor a walk of its own memory's map belongs in its start.
_libc: list[object] = []
_have_pss: list[bool] = []


def _c_library() -> object:
    """The C library, loaded once (the keeper loads it first thing, before its limits)."""
    if not _libc:
        import ctypes

        _libc.append(ctypes.CDLL(None, use_errno=True))
    return _libc[0]


def prctl(option: int, value: int) -> None:
    """``prctl(option, value)`` where the C library has it (Linux)."""
    try:
        _c_library().prctl(option, value, 0, 0, 0)  # type: ignore[attr-defined]
    except AttributeError:
        pass


# what the command gets back as the default (Python and the keeper changed them)
RESET = (
    signal.SIGTERM,
    signal.SIGUSR1,
    signal.SIGCHLD,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGPIPE,
    signal.SIGXFSZ,
)


def children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as file:
                found += [int(p) for p in file.read().split()]
        except OSError:
            pass
    return found


def parent_of(pid: int) -> int:
    """The parent of ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return int(file.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def parents() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/*/stat`` (kernels without ``children`` files);
    those gone meanwhile under 0, which no walk reaches."""
    tree: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc: only the command's process group is reached
        return tree
    for name in names:
        if name.isdigit():
            tree.setdefault(parent_of(int(name)), []).append(int(name))
    return tree


HAVE_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def tree(root: int = 0) -> dict[int, list[int]]:
    """The children of ``root`` (default: this process) and of every process below it, parents
    before their children; only ``/proc`` entries of those processes are read, where the kernel
    has ``children`` files."""
    everyone = None if HAVE_CHILDREN_FILES else parents()
    found: dict[int, list[int]] = {}
    pending = [root or os.getpid()]
    while pending:
        pid = pending.pop(0)
        found[pid] = children(pid) if everyone is None else everyone.get(pid, [])
        pending += found[pid]
    return found


def descendants(root: int = 0) -> list[int]:
    """Every process below ``root`` (default: the keeper), parents before their children."""
    return [pid for kids in tree(root).values() for pid in kids]


def signal_all(sig: int) -> None:
    for pid in descendants():
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def drops_term(pid: int) -> bool:
    """Whether ``pid`` is the first process of a PID namespace below ours that leaves SIGTERM
    to its default action: the kernel drops a SIGTERM sent to it from outside that namespace
    (only SIGKILL reaches it)."""
    try:
        with open(f"/proc/{pid}/status") as file:
            status = dict(line.split(":", 1) for line in file if ":" in line)
        namespaces = status["NSpid"].split()
        handled = int(status["SigCgt"], 16) | int(status["SigIgn"], 16)
    except (OSError, KeyError, ValueError):
        return False
    return len(namespaces) > 1 and namespaces[-1] == "1" and not handled >> (signal.SIGTERM - 1) & 1


def _sum_fields(path: str, fields: tuple[str, ...]) -> int | None:
    """The sum of ``fields`` (kB lines) of a ``/proc`` file in bytes; None if unreadable."""
    total = 0
    try:
        with open(path) as file:
            for line in file:
                if line.startswith(fields):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return total


def have_pss() -> bool:
    """Whether ``/proc`` shows proportional sizes (``smaps_rollup``: Linux 5.9 on)."""
    if not _have_pss:
        _have_pss.append(bool(_sum_fields("/proc/self/smaps_rollup", ("Pss_Anon:",))))
    return _have_pss[0]


def _process_sum(pid: int, name: str, fields: tuple[str, ...]) -> int | None:
    """:func:`_sum_fields` of ``pid``'s ``/proc`` file ``name``, read through another thread
    when the leader shows none: a leader that exited alone (``SYS_exit``) is a zombie without
    memory while the others run on with all of it."""
    total = _sum_fields(f"/proc/{pid}/{name}", fields)
    if total:
        return total
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return total
    for tid in threads:
        if tid != str(pid) and (found := _sum_fields(f"/proc/{pid}/task/{tid}/{name}", fields)):
            return found
    return total


def tree_memory(limit: int) -> int:
    """Bytes of anonymous and shared memory the tree holds. The resident sizes (cheap to read)
    count pages that forked processes share once per process; past ``limit`` the proportional
    sizes (each shared page split among its sharers) decide, where they can be read (a
    process that made itself undumpable counts its resident size)."""
    pids = descendants()
    resident = sum(_resident(p) for p in pids)
    if resident <= limit or not have_pss():
        return resident
    total = 0
    for pid in pids:
        pss = _process_sum(pid, "smaps_rollup", ("Pss_Anon:", "Pss_Shmem:"))
        # None: undumpable, or exiting since the sum above (its memory already let go, or a
        # zombie): its resident size now, which an exiting process no longer has
        total += _resident(pid) if pss is None else pss
    return total


def _resident(pid: int) -> int:
    """Bytes of anonymous and shared memory ``pid`` maps (0 once it has let its memory go)."""
    return _process_sum(pid, "status", ("RssAnon:", "RssShmem:")) or 0


class Keeper:
    def __init__(self, channel: int, mode: str, memory: int, argv: list[str]) -> None:
        self.channel = channel
        self.mode = mode
        self.memory = memory
        self.argv = argv
        self.parent = os.getppid()
        self.me = os.getpid()
        self.target = 0
        self.status: int | None = None  # the command's wait status once it ended
        self.watch_until = 0.0  # until when a stop looks for processes that drop its SIGTERM
        self.looked: set[int] = set()  # the processes it looked at

    def say(self, text: str) -> None:
        if self.channel < 0:
            return
        try:
            os.write(self.channel, text.encode() + b"\n")
        except OSError:
            pass

    def start(self) -> None:
        # blocked across the fork: a signal sent to the child before it reset its handlers
        # (the keeper's, which would take it as the keeper's) waits, and acts once they are
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, RESET)
        pid = os.fork()
        if pid == 0:
            try:
                if self.mode != "server":
                    os.setsid()
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != self.me:  # the keeper died before the request took effect
                    os._exit(137)
                for sig in RESET:
                    signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                os.execvp(self.argv[0], self.argv)
            except BaseException as exc:
                os.write(2, f"vis: could not start {self.argv[0]}: {exc}\n".encode())
            os._exit(127)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self.target = pid
        devnull = os.open(os.devnull, os.O_RDWR)  # hold none of the command's pipes
        for fd in (0, 1) if self.mode == "server" else (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)

    def reap(self) -> bool:
        """Collect ended children; whether any child is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.target and self.status is None:
                self.status = status
                self.say(f"exit {self.code()}")

    def code(self) -> int:
        """The command's end as ``asyncio`` reports it: the exit code, or minus the signal."""
        status = self.status
        if status is None:
            return -signal.SIGKILL
        if os.WIFSIGNALED(status):
            return -os.WTERMSIG(status)
        return os.waitstatus_to_exitcode(status)

    def signal_tree(self, sig: int) -> None:
        """``sig`` to every descendant, and to the command's process group (reached even
        where ``/proc`` cannot be read)."""
        signal_all(sig)
        try:
            if self.target:
                os.killpg(self.target, sig)
        except OSError:
            pass

    def terminate(self) -> None:
        """SIGTERM to the tree, SIGKILL to each process of it that would drop the SIGTERM
        (:func:`drops_term`); such a one that appears later gets it in :meth:`watch`."""
        self.signal_tree(signal.SIGTERM)
        self.watch_until = time.monotonic() + STOP_WATCH
        self.looked.clear()
        self.watch()

    def watch(self) -> None:
        """SIGKILL to each process new to the tree since the last look that would drop a
        SIGTERM: a jail's inner bubblewrap whose outer one ended (by the SIGTERM) before the
        inner one had asked to die with it, left otherwise until the grace ends."""
        for pid in descendants():
            if pid not in self.looked:
                self.looked.add(pid)
                if drops_term(pid):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass

    def kill_all(self) -> None:
        """SIGKILL every descendant until none is left (new orphans come to the keeper); one
        it may not signal (a setuid program) is left after ``GIVE_UP`` seconds."""
        deadline = time.monotonic() + GIVE_UP
        while time.monotonic() < deadline:
            self.signal_tree(signal.SIGKILL)
            if not self.reap():
                return
            time.sleep(0.005)

    def leave(self) -> None:
        """Exit as the command did."""
        self.kill_all()
        if self.channel >= 0:
            os.close(self.channel)
        code = self.code()
        if code >= 0:
            os._exit(code)
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if -code not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(-code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
            os.kill(os.getpid(), -code)
        except (OSError, ValueError):
            pass
        os._exit(128 - code)

    def run(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        pending: list[int] = []
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGUSR1):
            signal.signal(sig, lambda s, _f: pending.append(s))
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        fd = self.channel
        watched = [fd, wake_r] if fd >= 0 else [wake_r]
        if self.mode == "server":
            self.start()
        while True:
            watching = time.monotonic() < self.watch_until
            timeout = STOP_POLL if watching else MEMORY_POLL if self.memory else PARENT_POLL
            try:
                ready, _, _ = select.select(watched, [], [], timeout)
            except InterruptedError:
                ready = []
            if wake_r in ready:
                try:
                    os.read(wake_r, 512)
                except BlockingIOError:
                    pass
            said = b""
            if fd >= 0 and fd in ready:
                try:
                    said = os.read(fd, 512)
                    gone = not said
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:  # Vis is gone
                    self.leave()
            if os.getppid() != self.parent:
                self.leave()
            signals, pending[:] = list(pending), []
            if signal.SIGUSR1 in signals or (signals and not self.target):
                self.leave()  # killed, or ended before the command started
            if said and not self.target:  # Vis says the command may start
                self.start()
            if signal.SIGTERM in signals:
                self.terminate()
            elif watching:
                self.watch()
            left = self.reap()
            if self.status is not None and (self.mode != "shell" or not left):
                self.leave()
            if self.memory and (used := tree_memory(self.memory)) > self.memory:
                self.say(f"memory {used}")
                self.leave()


def limit(memory: int, processes: int) -> None:
    """The limits of every process of the tree, set here before the command starts (which
    inherits them): ``memory`` bytes of data per process, ``processes`` of the user (0: none).
    One that cannot be set (above the hard limit) ends the keeper: the command never runs."""
    try:
        if memory:
            resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        if processes:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    except (OSError, ValueError) as exc:
        sys.stderr.write(
            f"vis keeper: cannot apply the limits (setting memory_limit, process_limit): {exc}\n"
        )
        os._exit(1)


def main() -> None:
    fd, mode = int(sys.argv[1]), sys.argv[2]
    memory, processes = int(sys.argv[3]), int(sys.argv[4])
    argv = sys.argv[6:]
    if fd >= 0:
        os.set_inheritable(fd, False)
    _c_library()  # before the limits, as at import before: ctypes needs memory of its own
    limit(memory, processes)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)  # nothing of the tree can trace it
    Keeper(fd, mode, memory, argv).run()


if __name__ == "__main__":
    main()
