"""The one interface through which the SDK reaches the Vis process it runs in, and which one.

The SDK itself does no host work: ``vis.state``, ``vis.notify``, ``vis.ask``, ``vis.live`` …
validate their arguments and call the :class:`Runtime` of the running call (its
``CallContext.runtime``), else the one runtime a child process installed once at its start: a
forwarding one in an extension worker, a storing one in the registration worker, a refusing
one in the model's sandbox. The Vis host installs none: it passes its runtime with every call
it makes and every worker request it serves (a second Host its own).
Outside Vis (a plain script or unit test) none is installed and each call says what it does
then (state in memory, roots at the working directory, …).
"""

from __future__ import annotations

import asyncio
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.extension.context import current_call, serving_runtime

if TYPE_CHECKING:
    from vis_core.extension.attachments import Stored
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.fs import JailTerms
    from vis_core.extension.live import LiveView
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.model.activity import ActivityPresentation, ActivityRecord, SymbolTag


class ActivityPort(Protocol):
    """A session's Activities and tools as SDK calls reach them (the host's tool invoker)."""

    def registry(self) -> Any: ...

    def call(
        self,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        callers: tuple[str, ...] = (),
        parent_id: str | None = None,
    ) -> Coroutine[Any, Any, Any]: ...

    def new_record(
        self, tool: str, headline: str, *, tag: SymbolTag, owner: str, parent_id: str | None
    ) -> ActivityRecord: ...

    def show(self, record: ActivityRecord) -> Coroutine[Any, Any, None]: ...

    def ended(self, record: ActivityRecord, *, error: BaseException | None = None) -> Any: ...


class Runtime(ABC):
    """What the SDK needs from the Vis process it runs in. Each operation runs in the context
    of the running call (``current_call()``) of the process that serves it."""

    trusted: bool = True  # False in the model's sandbox: every operation is refused there

    @abstractmethod
    def council(self) -> Any:
        """``vis.council``: the Council handle of the bound session (child sessions)."""

    @abstractmethod
    def extension_path(self, owner: str) -> Path | None:
        """Where extension ``owner``'s files are (its folder or entry file), if it is loaded."""

    # -- vis.state: the durable dict of extension ``owner`` (None: code of no extension) -----
    @abstractmethod
    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        """``(found, value)`` of ``key``."""

    @abstractmethod
    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        """Save plain data under ``key``; ``None`` removes it."""

    @abstractmethod
    def state_delete(self, owner: str | None, key: str) -> bool:
        """Remove ``key``; whether it was there."""

    @abstractmethod
    def state_keys(self, owner: str | None) -> list[str]: ...

    @abstractmethod
    def state_items(self, owner: str | None) -> dict[str, Any]: ...

    @abstractmethod
    def state_clear(self, owner: str | None) -> None: ...

    # -- vis.log, vis.notify -------------------------------------------------------------------
    @abstractmethod
    def log(self, level: str, message: str, source: str) -> None:
        """Append one line of ``source`` to today's Vis log (secrets redacted)."""

    @abstractmethod
    def notify(self, text: str, kind: str) -> bool:
        """Show ``text`` in the running call's session; False when no session can show it."""

    # -- vis.ask, vis.live ---------------------------------------------------------------------
    @abstractmethod
    def ask(self, form: Form) -> Answer:
        """Show ``form`` to the person and wait for the answer (or why there is none)."""

    @abstractmethod
    def open_live(
        self,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: Any,
        key: str | None,
        flush_ms: int,
    ) -> LiveView:
        """Open a live view (its nodes checked) where the running call's person sees it."""

    # -- sessions (vis.list_sessions, vis.read_session, vis.sessions, vis.session) -------------
    @abstractmethod
    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        """Every session newest first, or the ranked matches of ``search``."""

    @abstractmethod
    def read_session(self, session_id: str | None) -> dict[str, Any]:
        """The data of ``session_id`` (id, prefix or marker), else of the bound session."""

    @abstractmethod
    def sessions(self) -> Any:
        """The ``vis.sessions`` handle: create, get, list, models, export, restore."""

    @abstractmethod
    def bound_session(self) -> Any:
        """The ``Session`` handle of the session that called the extension."""

    # -- attachments of the running python_execution block -------------------------------------
    @abstractmethod
    def attachment_add(
        self,
        data: bytes,
        filename: str,
        media_type: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        """Keep ``data`` as the next version of ``filename``; its descriptor."""

    @abstractmethod
    def attachment_list(self, filename: str | None) -> list[dict[str, Any]]: ...

    @abstractmethod
    def attachment_find(self, key: str, version: int | None, what: str) -> Stored:
        """The attachment with id or filename ``key`` (at ``version``); ``LookupError``."""

    @abstractmethod
    def attachment_read(self, key: str, version: int | None) -> bytes: ...

    @abstractmethod
    def attachment_show(self, key: str, version: int | None) -> dict[str, Any]:
        """Show a stored image to the model with the running block's result."""

    # -- vis.tools ---------------------------------------------------------------------------------
    @abstractmethod
    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the bound session's tool ``name`` as the model would (``VisToolError`` if it
        fails or is refused); its result shaped as the model sees it."""

    # -- the running call: its Activity, settings, MCP servers and jail ------------------------
    @abstractmethod
    def publish_activity(self, presentation: ActivityPresentation) -> None:
        """Replace the running tool's Activity snapshot."""

    @abstractmethod
    def setting_value(self, setting_id: str, default: Any) -> Any:
        """``Setting.value()`` of ``setting_id`` in the running call (``default``, the
        declared one, where this process has no settings)."""

    @abstractmethod
    def register_mcp_server(self, owner: str, server: McpServer) -> None:
        """Add ``server`` of extension ``owner`` to the running sessions at once."""

    @abstractmethod
    def jail_terms(self) -> JailTerms:
        """What confines a child of the running call: its session's jail, project, grants."""

    # -- git ---------------------------------------------------------------------------------------
    @abstractmethod
    def run_git(self, args: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess[bytes]:
        """``git args`` in ``cwd``, immune to the repository's configuration (hooks, fsmonitor,
        pagers, external diff, filters), jailed when the call's session jails its children;
        ``GitFailed`` when git cannot start."""

    # -- vis.file_mutation_queue ------------------------------------------------------------------
    @abstractmethod
    def mutation_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop whose per-file queues ``patch`` holds in this process (None: there is
        no session's ``patch`` here, the folder's ``flock`` alone orders writes)."""

    @abstractmethod
    def save_output(self, text: str, label: str) -> Path:
        """Keep a full output (``vis.save_full_output``) in the call's session's output
        folder, saved secrets redacted; the file's path."""


# -- which runtime -------------------------------------------------------------------------------

_installed: Runtime | None = None  # the one a child process installed at its start


def install(runtime: Runtime | None) -> Runtime | None:
    """Make ``runtime`` serve this process's SDK calls made outside a bound call (None: no
    runtime): how the synchronous SDK face finds it in a child process, set once at its start.
    The host never installs one (``vis.testing.LiveRecorder`` only while it records). Returns
    the runtime it replaces."""
    global _installed
    previous, _installed = _installed, runtime
    return previous


def installed_runtime() -> Runtime | None:
    """The runtime of the running call, else the one this process installed, else ``None``:
    this process is not Vis (a plain script or unit test)."""
    runtime = serving_runtime()
    return _installed if runtime is None else runtime


def current_runtime() -> Runtime:
    """The runtime SDK calls go to now: :func:`installed_runtime`, else the one of a process
    outside Vis."""
    runtime = installed_runtime()
    if runtime is not None:
        return runtime
    from vis_core.extension.outside import OUTSIDE

    return OUTSIDE


def passed_on(to: Callable[[Any, str], Callable[..., Any]]) -> Any:
    """In a :class:`Runtime` subclass's body, ``state_read = passed_on(to)``: the operation
    another does, ``to(runtime, "state_read")`` (the inner runtime's method, a frame to the
    host), with the signature and meaning of the :class:`Runtime` method of that name."""
    return _PassedOn(to)


class _PassedOn:
    __slots__ = ("name", "to")

    def __init__(self, to: Callable[[Any, str], Callable[..., Any]]) -> None:
        self.to = to
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, runtime: Any, owner: type | None = None) -> Any:
        return self if runtime is None else self.to(runtime, self.name)


def _inner(runtime: RuntimeOverride, name: str) -> Callable[..., Any]:
    return getattr(runtime.inner, name)


class RuntimeOverride(Runtime):
    """A runtime that changes some operations of ``inner`` and passes every other one on
    (``vis.testing.LiveRecorder`` records views this way)."""

    def __init__(self, inner: Runtime) -> None:
        self.inner = inner
        self.trusted = inner.trusted

    extension_path = passed_on(_inner)
    council = passed_on(_inner)
    state_read = passed_on(_inner)
    state_write = passed_on(_inner)
    state_delete = passed_on(_inner)
    state_keys = passed_on(_inner)
    state_items = passed_on(_inner)
    state_clear = passed_on(_inner)
    log = passed_on(_inner)
    notify = passed_on(_inner)
    ask = passed_on(_inner)
    open_live = passed_on(_inner)
    list_sessions = passed_on(_inner)
    read_session = passed_on(_inner)
    sessions = passed_on(_inner)
    bound_session = passed_on(_inner)
    attachment_add = passed_on(_inner)
    attachment_list = passed_on(_inner)
    attachment_find = passed_on(_inner)
    attachment_read = passed_on(_inner)
    attachment_show = passed_on(_inner)
    call_tool = passed_on(_inner)
    publish_activity = passed_on(_inner)
    setting_value = passed_on(_inner)
    register_mcp_server = passed_on(_inner)
    jail_terms = passed_on(_inner)
    run_git = passed_on(_inner)
    mutation_loop = passed_on(_inner)
    save_output = passed_on(_inner)


def output_dir() -> Path:
    """The output folder of the running call's session (``extensions`` without one)."""
    from vis_core.paths import VisPaths

    call = current_call()
    folder = call.session_id if call is not None and call.session_id else "extensions"
    return VisPaths.from_env().data_dir / "outputs" / folder


def operations() -> frozenset[str]:
    """The names of the runtime's operations (what a worker may ask its host to run)."""
    return frozenset(Runtime.__abstractmethods__)
