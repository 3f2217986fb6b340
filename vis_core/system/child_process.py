"""How Vis starts its Python children, isolated, and what each does first: protocol fds apart
from stdio, exit with its parent.

The sandbox child and the extension workers talk to the host over their original stdin and
stdout; the code they run must not read the protocol or print into it. Imports nothing of Vis.
"""

from __future__ import annotations

import functools
import gc
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import queue

PARENT_POLL_INTERVAL = 1.0  # seconds between two looks at the parent
# The folder that holds this ``vis_core`` (a checkout, or site-packages): children load it there.
VIS_ROOT = Path(__file__).resolve().parents[2]
# Vis's own packages: read-only in the jail wherever they lie; a jailed block imports only the SDK.
VIS_PACKAGES = ("vis_core", "vis_tui", "vis_extensions", "blockether")

# What a child runs first (``-c``): ``vis_core`` from VIS_ROOT and nothing else from there, then
# ``module:function``. Neither the working folder nor VIS_ROOT goes on ``sys.path``: either may
# be a checkout whose ``json.py`` would shadow the standard library's.
# With a parent's pid (else "-"), the kernel kills the child first once the thread of that
# parent that started it ends (PR_SET_PDEATHSIG, as :func:`killed_with_parent` sets it before
# the exec), and a child whose parent is gone already ends at once. The cyclic collector is off
# while the child imports (see :func:`collector_on`).
_BOOT = """\
import gc
gc.disable()
import importlib, importlib.util, os, sys
root, target, parent = sys.argv[1:4]
del sys.argv[1:4]
if parent != "-":
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    if os.getppid() != int(parent):
        os._exit(137)
package = os.path.join(root, "vis_core")
spec = importlib.util.spec_from_file_location(
    "vis_core", os.path.join(package, "__init__.py"), submodule_search_locations=[package]
)
sys.modules["vis_core"] = vis_core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vis_core)
module, _, function = target.partition(":")
getattr(importlib.import_module(module), function)()
"""


def python_argv(python: str, target: str, *flags: str, killed_with: int | None = None) -> list[str]:
    """The command that runs ``target`` (``"package.module:function"``) of this Vis in an
    isolated ``python``: ``-I`` keeps the working folder and the script's folder off
    ``sys.path``, skips the user site folder and ignores every ``PYTHON*`` variable
    (``PYTHONPATH``, ``PYTHONSTARTUP``, ``PYTHONHOME``, ``PYTHONINSPECT``, ...), so neither a
    checkout's ``uuid.py``/``sitecustomize.py``/``vis_core/`` nor the environment it sets runs
    in Vis's child. ``flags``: more interpreter options, e.g. ``-B`` (no ``.pyc`` written).
    ``killed_with``: this process's pid, for a child started on :func:`on_lasting_thread` that
    the kernel kills with that thread (Linux), set by the child itself first thing, so that it
    is started without a ``preexec_fn``: by ``vfork``, whose cost does not grow with Vis's
    memory, where a fork of a 300 MB Vis costs ~20 ms of CPU."""
    parent = "-" if killed_with is None else str(killed_with)
    return [python, "-I", *flags, "-c", _BOOT, str(VIS_ROOT), target, parent]


def collector_on() -> None:
    """The child started: what its imports made lives as long as it does, so it is set aside
    for good (``gc.freeze``), and the cyclic collector, off since the child's first line, is on
    again for what the child does next. Its passes over those imports were ~5 ms of the ~60 ms
    a sandbox child or an extension worker spends importing, and every later full pass walked
    them again. Each child that lasts calls this once, before it serves its first request."""
    gc.freeze()
    gc.enable()


@dataclass(frozen=True)
class ProtocolFds:
    """The child's ends of the host's pipes, kept apart from fd 0 and 1."""

    read: int
    write: int


def take_protocol_fds() -> ProtocolFds:
    """Keep the original stdin/stdout for the protocol; fd 0 becomes ``/dev/null`` and fd 1 a
    copy of fd 2, so output that bypasses ``sys.stdout`` lands where the host collects it."""
    fds = ProtocolFds(os.dup(0), os.dup(1))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return fds


def exit_with_parent(interval: float = PARENT_POLL_INTERVAL) -> threading.Thread:
    """Start a daemon thread that ends this process and its process group once the process
    that started it is gone, whichever thread of it started this one (the kernel's signal,
    :func:`killed_with_parent`, ends only the child itself): it waits on a
    pidfd of the parent, or, where there is none (an old kernel, a parent outside this PID
    namespace), looks every ``interval`` seconds whether it was reparented."""
    parent = os.getppid()
    try:
        watched: int | None = os.pidfd_open(parent)
    except (AttributeError, OSError):
        watched = None

    def gone() -> None:
        if os.getpgrp() == os.getpid():  # what this process started in its group goes too
            os.killpg(0, signal.SIGKILL)
        os._exit(0)

    def watch() -> None:
        if watched is not None:
            select.select([watched], [], [])
            gone()
        while os.getppid() == parent:
            time.sleep(interval)
        gone()

    if os.getppid() != parent:  # the parent went before the pidfd was taken
        gone()
    thread = threading.Thread(target=watch, name="vis-parent-watch", daemon=True)
    thread.start()
    return thread


PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
T = TypeVar("T")
_lasting: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] | None = None
_lasting_lock = threading.Lock()


def on_lasting_thread(start: Callable[[], T]) -> T:
    """``start()``, run on one daemon thread that lasts as long as this process: a child's
    parent-death signal (:func:`killed_with_parent`) is sent when the *thread* that forked it
    ends, and Vis starts children from short-lived threads too."""
    global _lasting
    with _lasting_lock:
        if _lasting is None:
            import queue  # the host's alone: its children import this module too

            _lasting = queue.SimpleQueue()
            threading.Thread(
                target=_serve_starts, args=(_lasting,), name="vis-child-start", daemon=True
            ).start()
    done: Future[T] = Future()
    _lasting.put((start, done))
    return done.result()


def _serve_starts(starts: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]) -> None:
    while True:
        start, done = starts.get()
        try:
            done.set_result(start())
        except BaseException as exc:  # handed to the caller
            done.set_exception(exc)


def killed_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` by which the kernel kills the child (``PR_SET_PDEATHSIG``) once the
    thread that forked it ends: it holds even while the child's own watch of its parent
    (:func:`exit_with_parent`) cannot run (a C loop holding the GIL, a stopped process).
    Fork through :func:`on_lasting_thread`. None where the C library has no ``prctl``."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def setup() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent went before the request took effect
            os._exit(137)

    return setup


@functools.cache
def hide_from_children() -> bool:
    """Make this process unreadable to processes of the same user (``PR_SET_DUMPABLE`` 0):
    an unjailed block then cannot read Vis's environment (API keys) or memory through
    ``/proc/<pid>/environ`` or ``mem``, nor attach a debugger. Root (``CAP_SYS_PTRACE``) still
    can. Children are not affected (``execve`` makes them dumpable again). Linux only; returns
    whether it took effect. Done once, before the first block or command starts: at Vis's
    start it would cost every start the import of ``ctypes``."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
