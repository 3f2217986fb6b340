"""The one interface through which the SDK reaches the Vis process it runs in, and which one.

The SDK itself does no host work: ``vis.state``, ``vis.notify``, ``vis.ask``, ``vis.live`` …
validate their arguments and call the :class:`Runtime` of the running call (its
``CallContext.runtime``), else the one runtime a child process installed once at its start: a
forwarding one in an extension worker, a storing one in the registration worker, a refusing
one in the model's sandbox. The Vis host installs none: it passes its runtime with every call
it makes and every worker request it serves (a second Host its own).
Outside Vis (a plain script or unit test) none is installed and :data:`OUTSIDE`, the plain
:class:`Runtime`, says what each call does then (state in memory, roots at the working
directory, …).
"""

from __future__ import annotations

import functools
import subprocess
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vis_core.extension.context import current_call, serving_runtime
from vis_core.extension.errors import OUTSIDE_VIS
from vis_core.model.plain import check_plain

if TYPE_CHECKING:
    from vis_core.extension.attachments import Stored
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.fs import JailTerms
    from vis_core.extension.live import LiveView
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.model.activity import ActivityPresentation, ActivityRecord, SymbolTag
    from vis_core.system.git_control import GitLooks


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


class Runtime:
    """What the SDK needs from the process it runs in, each operation in the context of the
    running call (``current_call()``). As it stands, what SDK calls do when no Vis process
    serves them (a plain script, an extension's unit test): state and attachments in memory,
    the log file under ``VIS_HOME``, no person to ask or show. Each Vis process's runtime
    overrides what it serves."""

    trusted: bool = True  # False in the model's sandbox: every operation is refused there

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str | None, dict[str, Any]] = {}

    def extension_path(self, owner: str) -> Path | None:
        """Where extension ``owner``'s files are (its folder or entry file), if it is loaded."""
        return None

    # -- vis.state: the durable dict of extension ``owner`` (None: code of no extension) -----
    # (in memory for the process)
    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        with self._lock:
            values = self._state.get(owner, {})
            return key in values, values.get(key)

    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        """Save plain data under ``key``; ``None`` removes it."""
        check_plain(value, f"the state value {key!r}")  # the same plain-data rule as in Vis
        with self._lock:
            if value is None:
                self._state.get(owner, {}).pop(key, None)
            else:
                self._state.setdefault(owner, {})[key] = value

    def state_delete(self, owner: str | None, key: str) -> bool:
        with self._lock:
            values = self._state.get(owner, {})
            return values.pop(key, _GONE) is not _GONE

    def state_keys(self, owner: str | None) -> list[str]:
        with self._lock:
            return sorted(self._state.get(owner, {}))

    def state_items(self, owner: str | None) -> dict[str, Any]:
        with self._lock:
            return dict(sorted(self._state.get(owner, {}).items()))

    def state_clear(self, owner: str | None) -> None:
        with self._lock:
            self._state.pop(owner, None)

    # -- log and notify: the log file --------------------------------------------------------------
    def log(self, level: str, message: str, source: str) -> None:
        """Append one line of ``source`` to today's Vis log (secrets redacted)."""
        from vis_core.extension.logs import write_log

        write_log(level, message, source=source)

    def notify(self, text: str, kind: str) -> bool:
        """Show ``text`` in the running call's session; False when no session can show it."""
        return False  # no session shows it: the SDK logs it

    # -- no person -------------------------------------------------------------------------------
    def ask(self, form: Form) -> Answer:
        """Show ``form`` to the person and wait for the answer (or why there is none)."""
        from vis_core.extension.forms import Answer, AnswerReason

        return Answer(reason=AnswerReason.UNDELIVERABLE)

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
        from vis_core.extension.live import NoSink, open_view

        return open_view(title, nodes, placement, key, flush_ms, NoSink())

    # -- sessions: only a Vis process has them -------------------------------------------------
    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        """Every session newest first, or the ranked matches of ``search``."""
        raise RuntimeError(f"vis.list_sessions() {OUTSIDE_VIS}")

    def read_session(self, session_id: str | None) -> dict[str, Any]:
        """The data of ``session_id`` (id, prefix or marker), else of the bound session."""
        raise RuntimeError(f"vis.read_session() {OUTSIDE_VIS}")

    def sessions(self) -> Any:
        """The ``vis.sessions`` handle: create, get, list, models, export, restore."""
        raise RuntimeError(f"vis.sessions {OUTSIDE_VIS}")

    def council(self) -> Any:
        """``vis.council``: the Council handle of the bound session (child sessions)."""
        raise RuntimeError(
            "vis.council is the Council handle of the session that called your extension, and "
            "no session did; use it inside a tool call or command of a session"
        )

    def bound_session(self) -> Any:
        """The ``Session`` handle of the session that called the extension."""
        raise RuntimeError(
            "vis.session is the session that called your extension, and no session did; "
            "use it inside a tool call or command of a session"
        )

    # -- attachments of the running python_execution block (in memory) ------------------------
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
        from vis_core.extension.attachments import MEMORY

        return MEMORY.add(data, filename, media_type, audience, commentable, label)

    def attachment_list(self, filename: str | None) -> list[dict[str, Any]]:
        from vis_core.extension.attachments import MEMORY

        return MEMORY.listed(filename)

    def attachment_find(self, key: str, version: int | None, what: str) -> Stored:
        """The attachment with id or filename ``key`` (at ``version``); ``LookupError``."""
        from vis_core.extension.attachments import MEMORY, missing

        found = MEMORY.find(key, version)
        if found is None:
            raise missing(key, version, what)
        return found

    def attachment_read(self, key: str, version: int | None) -> bytes:
        from vis_core.extension.attachments import stored_bytes

        return stored_bytes(self.attachment_find(key, version, "vis.read_attachment()"))

    def attachment_show(self, key: str, version: int | None) -> dict[str, Any]:
        """Show a stored image to the model with the running block's result."""
        from vis_core.extension.attachments import MEMORY, check_shown

        found = self.attachment_find(key, version, "vis.show_attachment()")
        check_shown(found)
        MEMORY.show(found)
        return found.descriptor()

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the bound session's tool ``name`` as the model would (``VisToolError`` if it
        fails or is refused); its result shaped as the model sees it."""
        raise RuntimeError(
            f"vis.tools.{name} works only while a Vis session runs your extension; outside a "
            "session (for example in unit tests), import and call the other package directly"
        )

    # -- the running call: its Activity, settings, MCP servers and jail ------------------------
    def publish_activity(self, presentation: ActivityPresentation) -> None:
        """Replace the running tool's Activity snapshot."""
        call = current_call()
        if call is None or call.publish is None:
            raise RuntimeError("publish_activity works only while Vis runs one of your tools")
        call.publish(presentation)

    def setting_value(self, setting_id: str, default: Any) -> Any:
        """``Setting.value()`` of ``setting_id`` in the running call (``default``, the
        declared one, where this process has no settings)."""
        return default  # no settings here: the declared default

    def register_mcp_server(self, owner: str, server: McpServer) -> None:
        """Add ``server`` of extension ``owner`` to the running sessions at once."""
        return None  # no session runs here: the declaration is read when one starts

    def jail_terms(self) -> JailTerms:
        """What confines a child of the running call: its session's jail, project, grants."""
        from vis_core.extension.fs import JailTerms

        return JailTerms()

    def save_output(self, text: str, label: str) -> Path:
        """Keep a full output (``vis.save_full_output``) in the call's session's output
        folder, saved secrets redacted (outside Vis none are loaded); the file's path."""
        from vis_core.system.truncate import save_full_output

        return save_full_output(text, output_dir(), label)

    @functools.cached_property
    def git_looks(self) -> GitLooks:
        """The looks for the git files of the workspaces this process jails children in
        (``vis.git``, ``vis.jailed_shell``), made at the first."""
        from vis_core.system.git_control import GitLooks

        return GitLooks()

    def run_git(
        self, args: tuple[str, ...], cwd: Path, take: Callable[[bytes], None] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """``git args`` in ``cwd``, immune to the repository's configuration (hooks, fsmonitor,
        pagers, external diff, filters), jailed when the call's session jails its children;
        ``GitFailed`` when git cannot start. ``take``: given git's output as it comes (what
        it raises stops git), which is then not kept."""
        from vis_core.extension.workspace import hardened_git

        return hardened_git(args, cwd, take)


_GONE = object()
OUTSIDE = Runtime()
R = TypeVar("R", bound=type[Runtime])


# the names of the runtime's operations (what a worker may ask its host to run)
OPERATIONS = frozenset(
    name for name, value in vars(Runtime).items() if callable(value) and name[0] != "_"
)


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
    return OUTSIDE if runtime is None else runtime


def passes_on(to: Callable[[Any, str], Callable[..., Any]]) -> Callable[[R], R]:
    """A class decorator: each operation of :class:`Runtime` that the class does not define in
    its body is a property giving the one another does, ``to(runtime, name)`` (the inner
    runtime's method, a frame to the host)."""

    def decorate(cls: R) -> R:
        for name in OPERATIONS - vars(cls).keys():
            setattr(cls, name, property(lambda runtime, name=name: to(runtime, name)))
        return cls

    return decorate


def _inner(runtime: RuntimeOverride, name: str) -> Callable[..., Any]:
    return getattr(runtime.inner, name)


@passes_on(_inner)
class RuntimeOverride(Runtime):
    """A runtime that changes some operations of ``inner`` and passes every other one on
    (``vis.testing.LiveRecorder`` records views this way)."""

    def __init__(self, inner: Runtime) -> None:
        super().__init__()
        self.inner = inner
        self.trusted = inner.trusted


def output_dir() -> Path:
    """The output folder of the running call's session (``extensions`` without one)."""
    from vis_core.paths import VisPaths

    call = current_call()
    folder = call.session_id if call is not None and call.session_id else "extensions"
    return VisPaths.from_env().data_dir / "outputs" / folder
