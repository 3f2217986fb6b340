"""The model's processes held still while Vis acts on files they could change (an editor opening
a path, git in a draft): none can swap a link in on the way.

The model's code runs in jailed commands (its sandbox child, its shells), each under a keeper
(:mod:`vis_core.system.keeper`) that keeps every process the command starts below it. Whoever
starts one hands its keeper to :func:`model_command` before the command starts: the keepers'
trees are what is held, nothing else of Vis (extension workers, MCP servers go on). Inside
:func:`model_stopped`, each process of those trees is stopped, until two looks at ``/proc`` in
a row find the same processes, all stopped (a process may fork just before its stop lands: the
second look finds its child), a process when each of its threads is (its leader may have
exited, shown a zombie, while the others run on). A stopped process cannot fork, rename or
continue another: a path checked then stays as checked until they continue. A command started
meanwhile waits for the last holder to leave (its keeper starts it when told). A jailed
command an extension starts (``vis.jailed_shell``) runs the workspace's code too (tests, a
build, a language server): its keeper, below the extension's worker, is found by its command
line and held as well; one the worker starts while a hold lasts waits for it to end: the
holder locks a file (``HOLD_ENV`` names it to the workers) that the worker's
``model_command`` must share first. With the jail off there is none to stop, and no boundary
to keep: the model's code reads and writes whatever this user can.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

STOP_SECONDS = 2.0  # a process in an uninterruptible wait stops when its call returns
_STOPPED = frozenset("TtZX")  # stopped, traced, zombie, dead: none of them acts
HOLD_ENV = "VIS_MODEL_HOLD"  # in a worker: the file its Vis locks while it holds the model


class NotQuiet(OSError):
    """The model's processes could not all be stopped in time (the tool uses disk)."""


def _stat(path: str) -> list[str] | None:
    """The fields of a ``/proc`` stat file (a process's, a thread's) after its name (its state
    first); None once it is gone. Read without a file object: a fifth of the cost, and a hold
    reads one per thread of the model's."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
        return data.rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def _still(pid: int) -> bool:
    """Whether no thread of ``pid`` can act: each is stopped, traced, a zombie or gone. A leader
    that exited (``SYS_exit``) shows ``Z`` while its other threads run on; the others are read
    only when the leader is still and not alone (``num_threads``)."""
    fields = _stat(f"/proc/{pid}/stat")
    if fields is None:
        return True
    if fields[0] not in _STOPPED:
        return False
    if fields[17] == "1":  # the leader alone: none can start another while it is still
        return True
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:  # gone
        return True
    except OSError:  # not known to be still: stopped again, and looked at again
        return False
    for tid in tasks:
        fields = _stat(f"/proc/{pid}/task/{tid}/stat")
        if fields is not None and fields[0] not in _STOPPED:  # None: that thread is gone
            return False
    return True


def _start_time(pid: int) -> str | None:
    """When ``pid`` started (None once it is gone): a pid used again is another process."""
    fields = _stat(f"/proc/{pid}/stat")
    return None if fields is None else fields[19]


class _Model:
    """The keepers of the model's commands in this process, who holds them, what they stopped
    and what waits to start."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keepers: dict[int, str] = {}  # pid: when it started
        self.holders = 0
        self.stopped: set[int] = set()
        self.waiting: list[Callable[[], None]] = []
        self.gate = threading.Lock()  # taken to become the first holder, or to stop being the last
        self.hold: int | None = None  # the open file the holders lock (:func:`hold_file`)
        self.hold_path = ""

    def live(self) -> list[int]:
        """The keepers still there (with the lock held); the ended ones are forgotten."""
        for pid, started in list(self.keepers.items()):
            if _start_time(pid) != started:
                del self.keepers[pid]
        return list(self.keepers)


_MODEL = _Model()


def model_command(keeper: int, start: Callable[[], None]) -> None:
    """A jailed command of the model's whose keeper, ``keeper``, waits to start it: held from
    now on. ``start`` tells the keeper to start it, at once, or once the last holder left (in
    an extension worker: once its Vis holds no more, see ``HOLD_ENV``)."""
    with _MODEL.lock:
        _MODEL.live()
        started = _start_time(keeper)
        if started is not None:
            _MODEL.keepers[keeper] = started
        if _MODEL.holders:
            _MODEL.waiting.append(start)
            return
    held_by = os.environ.get(HOLD_ENV)
    if held_by:
        _start_unheld(held_by, start)
    else:
        start()


def _start_unheld(path: str, start: Callable[[], None]) -> None:
    """``start`` while the file another Vis process locks when it holds the model is not
    locked: now, or from a thread once it is unlocked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # its Vis is gone (and with it, what a hold would protect)
        start()
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        threading.Thread(
            target=_start_after, args=(fd, start), name="vis-hold-wait", daemon=True
        ).start()
        return
    _start_after(fd, start)


def _start_after(fd: int, start: Callable[[], None]) -> None:
    """``start`` once the lock on ``fd`` is shared (here, the holder's is gone), then close."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        start()
    finally:
        os.close(fd)


def hold_file() -> str:
    """The file this process locks while it holds the model's processes, made once (in a
    folder of its own, removed at exit or swept after a kill: :mod:`leftovers`); its
    extension workers are given it in ``HOLD_ENV``."""
    from vis_core.system.leftovers import owned_folder, release

    with _MODEL.gate:
        if _MODEL.hold is None:
            folder = owned_folder("vis-hold-")
            path = folder / "hold"
            _MODEL.hold = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            _MODEL.hold_path = str(path)
            atexit.register(release, folder)
        return _MODEL.hold_path


def held_processes() -> list[int]:
    """The model's processes: the keepers of its commands (those this process started, and the
    jailed keepers below it: an extension's ``vis.jailed_shell``) and every process below them."""
    from vis_core.system.keeper import tree  # here: only a jailed command needs it

    with _MODEL.lock:
        keepers = _MODEL.live()
    below = tree()  # this process's descendants only: the keepers are among them
    keepers = sorted({*keepers, *jailed_keepers(below)})
    found: list[int] = []
    pending = keepers
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += below.get(pid, [])
    return found


def jailed_keepers(tree: dict[int, list[int]]) -> list[int]:
    """The keepers in this process's ``tree`` (:func:`~vis_core.system.keeper.tree`) whose
    command is a jail (bwrap), by their command line: also those an extension's worker started
    (``vis.jailed_shell``). Such a command runs the workspace's code (a test run, a build, a
    language server), which the model may have written, so it is held as the model's own."""
    from vis_core.system import keeper

    script = os.fsencode(os.path.abspath(keeper.__file__))
    found: list[int] = []
    pending = list(tree.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        pending += tree.get(pid, [])
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                args = file.read().split(b"\0")
        except OSError:
            continue
        if script in args[:4] and b"--" in args:
            command = args[args.index(b"--") + 1 :]
            if command and os.path.basename(command[0]) == b"bwrap":
                found.append(pid)
    return found


def _lock(fd: int, deadline: float) -> None:
    """Lock ``fd`` alone: a worker shares it only while it tells a keeper to start."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise NotQuiet("an extension's command kept the model from being held") from None
            time.sleep(0.001)


@contextlib.contextmanager
def model_stopped() -> Iterator[None]:
    """Inside, every process of the model's is stopped (see the module docstring); the ones
    stopped continue, and the commands started meanwhile start, when the last holder leaves
    (an editor's file call and git in a draft may hold them at once). ``NotQuiet`` when one
    would not stop within :data:`STOP_SECONDS`."""
    deadline = time.monotonic() + STOP_SECONDS
    with _MODEL.gate:  # the first holder locks the file its workers' commands wait on
        if _MODEL.hold is not None and not _MODEL.holders:
            _lock(_MODEL.hold, deadline)
        with _MODEL.lock:
            _MODEL.holders += 1
    try:
        still: set[int] | None = None  # what the last look found, when all of it was stopped
        while True:
            found = held_processes()
            running = [pid for pid in found if not _still(pid)]
            if not running:
                if still == set(found):
                    break  # two looks, the same processes, all stopped: none of them can act
                still = set(found)
                continue
            still = None
            if time.monotonic() > deadline:
                raise NotQuiet(f"{len(running)} of the model's processes would not stop")
            for pid in running:  # again if another continued it before it stopped
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    with _MODEL.lock:
                        _MODEL.stopped.add(pid)
            time.sleep(0.001)  # the signal lands when each is next scheduled
        yield
    finally:
        with _MODEL.gate, _MODEL.lock:  # until all continued: a new holder's look finds them
            _MODEL.holders -= 1
            if not _MODEL.holders:
                stopped, _MODEL.stopped = _MODEL.stopped, set()
                waiting, _MODEL.waiting = _MODEL.waiting, []
                for pid in stopped:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
                for start in waiting:
                    start()
                if _MODEL.hold is not None:
                    fcntl.flock(_MODEL.hold, fcntl.LOCK_UN)
