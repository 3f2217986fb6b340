"""The registration worker, host side: every entry file loads in a separate process.

The worker reports each declaration as data (:mod:`declared`); the host never runs the file.
An entry file that calls ``sys.exit``/``os._exit``, raises, loops forever or crashes the
interpreter fails there, with its file and cause, instead of ending or hanging Vis; the other
extensions go on. The worker's environment is a minimal base plus the project's values; a name
an entry file declares in ``env`` is resolved by the host for it alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.metadata import build_metadata
from vis_core.extension_host.discovery import Candidate
from vis_core.extension_host.entry import LoadError
from vis_core.extension_host.loaded import DEFAULT_LOAD_TIMEOUT
from vis_core.extension_host.screening import ENV, READY, SCREEN
from vis_core.ipc.kinds import ChannelClosed, TargetKind
from vis_core.system.process import ChildGone, ChildProcess, Ending

if TYPE_CHECKING:
    from vis_core.extension.declarations import Extension
    from vis_core.extension_host.worker_channel import Channel
    from vis_core.ipc.messages import Call
    from vis_core.tools.registry import HostTool

log = logging.getLogger(__name__)

START_TIMEOUT = 30.0  # seconds the worker itself may take to start (imports, on a loaded machine)
# The one worker program: a session's worker, and its load-only mode for registration.
WORKER = "vis_core.extension_host.worker_start:main"
LOAD_ONLY = "vis_core.extension_host.worker_start:load_only"


@dataclass(frozen=True)
class Screened:
    """The worker's verdict on one entry file: its declaration as data, or why it failed."""

    declaration: dict[str, Any] | None = None
    error: LoadError | None = None
    rebuilt: tuple[Extension, tuple[HostTool, ...]] | None = None  # kept, already rebuilt


class _Values:
    """Serves the worker's one kind of call: the values of the ``env`` names it declares."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = values

    def serve(self, call: Call, args: tuple, kwargs: dict) -> dict[str, str]:
        if call.target is not TargetKind.SDK or call.name != ENV:
            raise LookupError(f"the host does not serve {call.target} calls from this worker")
        return {name: self.values[name] for name in args[0] if name in self.values}


class RegistrationWorker:
    """One worker process in its load-only mode; restarted after a fault so the next entry
    file loads cleanly. Its calls are waited for here (the channel has no loop: the waiting
    caller reads the pipe), so loading needs no event loop."""

    def __init__(
        self,
        environment: Mapping[str, str],
        values: Mapping[str, str],
        *,
        load_timeout: float = DEFAULT_LOAD_TIMEOUT,
        cwd: Path | None = None,
    ) -> None:
        self.environment = dict(environment)
        self.values = values  # what declared names resolve to (project, .env, then the host's)
        self.load_timeout = load_timeout
        self.cwd = cwd
        self._proc: ChildProcess | None = None
        self._channel: Channel | None = None

    # -- process --------------------------------------------------------------------------

    def _start(self) -> Channel:
        from vis_core.extension_host.worker_channel import Channel  # msgspec: once a file loads

        proc = ChildProcess(LOAD_ONLY, env=self.environment, cwd=self.cwd)
        channel = Channel(proc.read_fd, proc.write_fd, _Values(self.values), name="vis-loading")
        self._proc, self._channel = proc, channel
        self._call(READY, (build_metadata(),), START_TIMEOUT)  # computed here once, not there
        return channel

    def _call(self, name: str, args: tuple, timeout: float) -> Any:
        """Call ``name`` in the worker and wait; :class:`ChildGone` when it does not answer."""
        channel, proc = self._channel, self._proc
        assert channel is not None and proc is not None
        try:
            _, future = channel.request(TargetKind.LOAD, name, args)
            return channel.wait(future, timeout)
        except TimeoutError:
            self.stop()
            raise ChildGone(
                f"loading did not finish within {timeout:g} s (the extension_load_timeout "
                "setting), so it was stopped; an endless loop at import?"
                if name == SCREEN
                else f"the extension worker did not start within {timeout:g} s"
            ) from None
        except ChannelClosed:
            raise ChildGone(_exit_cause(proc.ending())) from None
        except Exception as exc:  # an answer that is not one (it cannot be read here)
            self.stop()
            raise ChildGone(f"the extension worker failed: {exc}") from None

    def stop(self) -> None:
        proc, channel = self._proc, self._channel
        self._proc = self._channel = None
        if proc is None:
            return
        proc.kill()
        proc.ending()
        if channel is not None:  # its reader sees the end of the pipe, and closes its fd
            channel.close("the extension worker stopped", wait=5.0)
        proc.close()

    # -- loading --------------------------------------------------------------------------

    def screen(self, candidate: Candidate) -> Screened:
        """Load ``candidate`` in the worker; a fault becomes the candidate's load error."""
        try:
            if self._channel is None:
                self._start()
            names: list[str] = sorted(getattr(self.values, "project_names", ()))
            # a project extension's verified bytes go with it
            verdict = self._call(SCREEN, (candidate.to_wire(), names), self.load_timeout)
        except ChildGone as exc:
            self.stop()
            return Screened(error=LoadError(candidate.hint, candidate.entry_file, None, exc.how))
        if isinstance(verdict, LoadError):
            return Screened(error=verdict)
        return Screened(declaration=verdict)

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
