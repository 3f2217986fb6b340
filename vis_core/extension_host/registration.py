"""The registration worker, host side: every entry file loads in a separate process.

The worker reports each declaration as data (:mod:`declared`); the host never runs the file.
An entry file that calls ``sys.exit``/``os._exit``, raises, loops forever or crashes the
interpreter fails there, with its file and cause, instead of ending or hanging Vis; the other
extensions go on. The worker's environment is a minimal base plus the project's values; a name
an entry file declares in ``env`` is resolved by the host for it alone.
"""

from __future__ import annotations

import logging
import select
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension_host.discovery import Candidate
from vis_core.extension_host.entry import LoadError
from vis_core.extension_host.loaded import DEFAULT_LOAD_TIMEOUT
from vis_core.ipc.framing import ProtocolError, read_one, write_all
from vis_core.ipc.messages import (
    EnvAsk,
    EnvValues,
    Load,
    Loaded,
    LoadFailed,
    WorkerReady,
    framed,
    from_registration,
)
from vis_core.system.process import ChildProcess, Ending

if TYPE_CHECKING:
    from vis_core.extension.declarations import Extension
    from vis_core.tools.registry import HostTool

log = logging.getLogger(__name__)

MAX_MESSAGE = 64 << 20  # a declaration report is small; this only bounds a corrupt length
START_TIMEOUT = 30.0  # seconds the worker itself may take to start (imports, on a loaded machine)
# The one worker program: a session's worker, and its load-only mode for registration.
WORKER = "vis_core.extension_host.session_worker:main"
LOAD_ONLY = "vis_core.extension_host.session_worker:load_only"


@dataclass(frozen=True)
class Screened:
    """The worker's verdict on one entry file: its declaration as data, or why it failed."""

    declaration: dict[str, Any] | None = None
    error: LoadError | None = None
    rebuilt: tuple[Extension, tuple[HostTool, ...]] | None = None  # kept, already rebuilt


def _candidate(candidate: Candidate) -> dict[str, Any]:
    return candidate.to_wire()  # a project extension's verified bytes go with it


class WorkerGone(Exception):
    """The worker exited (or stopped answering) before it reported."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RegistrationWorker:
    """One worker process; restarted after a fault so the next entry file loads cleanly."""

    def __init__(
        self,
        environment: Mapping[str, str],
        values: Mapping[str, str],
        *,
        load_timeout: float = DEFAULT_LOAD_TIMEOUT,
        python: str = sys.executable,
        cwd: Path | None = None,
    ) -> None:
        self.environment = dict(environment)
        self.values = values  # what declared names resolve to (project, .env, then the host's)
        self.load_timeout = load_timeout
        self.python = python
        self.cwd = cwd
        self._proc: ChildProcess | None = None

    # -- process --------------------------------------------------------------------------

    def _start(self) -> ChildProcess:
        proc = ChildProcess(LOAD_ONLY, env=self.environment, cwd=self.cwd, python=self.python)
        self._proc = proc
        ready = self._next(proc, START_TIMEOUT, "start")
        if not isinstance(ready, WorkerReady):
            raise WorkerGone(f"the extension worker started with {ready!r} instead of ready")
        return proc

    def _next(
        self, proc: ChildProcess, timeout: float, what: str
    ) -> WorkerReady | EnvAsk | Loaded | LoadFailed:
        fd = proc.read_fd
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise WorkerGone(
                    f"loading did not finish within {timeout:g} s (the extension_load_timeout "
                    "setting), so it was stopped; an endless loop at import?"
                    if what == "load"
                    else f"the extension worker did not start within {timeout:g} s"
                )
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            try:
                body = read_one(fd, MAX_MESSAGE)
                if body is None:
                    raise WorkerGone(_exit_cause(proc.ending()))
                return from_registration(body)
            except ProtocolError as exc:
                self.stop()
                raise WorkerGone(f"the extension worker sent a broken message ({exc})") from None

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.close()

    # -- loading --------------------------------------------------------------------------

    def screen(self, candidate: Candidate) -> Screened:
        """Load ``candidate`` in the worker; a fault becomes the candidate's load error."""
        try:
            proc = self._proc if self._proc is not None else self._start()
            names: list[str] = sorted(getattr(self.values, "project_names", ()))
            write_all(proc.write_fd, framed(Load(_candidate(candidate), names)))
            while True:
                message = self._next(proc, self.load_timeout, "load")
                if isinstance(message, EnvAsk):
                    names = message.names
                    found = {name: self.values[name] for name in names if name in self.values}
                    write_all(proc.write_fd, framed(EnvValues(found)))
                elif isinstance(message, Loaded):
                    return Screened(declaration=message.declaration)
                elif isinstance(message, LoadFailed):
                    raw = message.error
                    return Screened(
                        error=LoadError(
                            str(raw["extension"]),
                            Path(raw["path"]),
                            raw.get("line"),
                            str(raw["message"]),
                        )
                    )
                else:
                    raise WorkerGone(f"the extension worker sent an unexpected {message!r}")
        except (WorkerGone, BrokenPipeError) as exc:
            self.stop()
            text = exc.message if isinstance(exc, WorkerGone) else _exit_cause(Ending(None))
            return Screened(error=LoadError(candidate.hint, candidate.entry_file, None, text))

    def screen_all(self, candidates: Iterable[Candidate]) -> dict[Path, Screened]:
        """Every candidate's verdict, by entry file; the worker stops afterwards."""
        try:
            return {c.entry_file: self.screen(c) for c in candidates}
        finally:
            self.stop()


def _exit_cause(ending: Ending) -> str:
    why = (
        ""
        if ending.signal
        else " (os._exit or a fatal error in the entry file); an "
        + ("extension must not end the process")
    )
    return f"the extension worker {ending} while loading this file{why}"
