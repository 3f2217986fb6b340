"""One server connection: connect (stdio, streamable HTTP or SSE), list, call, reconnect, stop."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from vis_core.mcp.config import SSE_HINT, ServerConfig, Source, Transport
from vis_core.mcp.group import end_group, spawned_with_stderr
from vis_core.mcp.launch import (
    CommandNotExecutable,
    CommandNotFound,
    CommandNotProgram,
    kept,
    start_folder,
)
from vis_core.mcp.logfile import McpLog
from vis_core.mcp.names import tool_names
from vis_core.mcp.oauth_session import sign_in_needed, uses_oauth
from vis_core.mcp.stderr_tail import StderrTail
from vis_core.mcp.values import expand_map, expanded_keys
from vis_core.paths import find_project_root, private_dir
from vis_core.system.loops import end_tasks, in_own_thread, keep
from vis_core.system.programs import path_outside
from vis_core.system.redaction import key_name, remember_secrets

log = logging.getLogger(__name__)

UNREADABLE_LOGGED = 3  # lines of one start's stdout that were no MCP message, logged each


def _sdk_readable(record: logging.LogRecord) -> bool:
    """Drops the SDK's record of each stdout line that is no MCP message: a traceback a line
    (a server printing 50,000 lines wrote 48 MB to ``vis.log`` at every start). The
    connection logs the first few in a line each and counts the rest."""
    return record.msg != "Failed to parse JSONRPC message from server"


logging.getLogger("mcp.client.stdio").addFilter(_sdk_readable)

T = TypeVar("T")
RETRIES = 2
RESOURCE_RETRIES = 1  # reading and listing resources is retried once after a transient error
RETRY_DELAYS = (0.3, 1.0)
TRANSIENT = {408, 429}
CLOSE_WAIT = 10.0  # seconds a call waits for a dropped connection to close before reconnecting
DRAIN_WAIT = 1.0  # seconds an ended stdio server's stderr may take to be read to its end
# seconds stop() waits for the connection's task: the SDK's own stop of a stdio server (stdin,
# 2 s, SIGTERM, 2 s, SIGKILL) and Vis's end of its group fit in it
STOP_WAIT = 10.0
REFUSED_HEADER = (
    "the server refused its Authorization header (401 Unauthorized): check the token it sends"
)


# What every connection imports of the SDK (anyio imports its asyncio backend at its first
# call, ~0.1 s of CPU), and what each transport adds
_SDK_MODULES = ("mcp_types", "mcp.client.session", "anyio._backends._asyncio")
_TRANSPORT_MODULES = {
    Transport.STDIO: ("mcp.client.stdio",),
    Transport.SSE: ("mcp.client.sse",),
    Transport.HTTP: ("httpx2", "mcp.client.streamable_http"),
}


def _load_sdk(transport: Transport) -> None:
    """Import the SDK's client for ``transport``: ``mcp`` takes about a second of CPU to import,
    which on the loop would freeze the app (keys, drawing) while its servers connect."""
    for name in (*_SDK_MODULES, *_TRANSPORT_MODULES[transport]):
        importlib.import_module(name)


class State(StrEnum):
    DISABLED = "disabled"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    FAILED = "failed"
    NEEDS_SIGN_IN = "needs sign-in"


ATTENTION = (State.FAILED, State.NEEDS_SIGN_IN, State.DISCONNECTED)


@dataclass(frozen=True)
class ToolInfo:
    """One server tool as Vis registers it."""

    server: str
    tool: str  # the server's name for it
    name: str  # mcp__<server>__<tool>
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict)


class ConnectionLost(ConnectionError):
    """The server went away during a request."""


class SessionExpired(ConnectionLost):
    """The HTTP server no longer knows the session (404: it restarted, or ended the session);
    it ran nothing of the request, which can go again on a new session."""


class McpCallError(RuntimeError):
    """The server answered a request with an error."""


@dataclass(frozen=True)
class _Launch:
    """How a stdio server starts, settled before the SDK is imported."""

    command: str
    args: list[str]
    env: dict[str, str] | None
    cwd: Path


class _Stopped(Exception):
    """:meth:`ServerConnection.stop` was called while the connection was being made."""


def _first(exc: BaseException) -> BaseException:
    """``exc``, or the first error of the group the SDK's task group made of it."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if inner:
            return _first(inner[0])
    return exc


def _describe(exc: BaseException) -> str:
    exc = _first(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _stopped(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`_Stopped`, alone or in the group the SDK's task group made."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_stopped(e) for e in exc.exceptions)
    return isinstance(exc, _Stopped)


def _unreadable_reason(exc: Exception) -> str:
    """Why a server's line could not be read, in one short line (pydantic's first says which
    union failed; the JSON fault, e.g. nesting past its limit, is further down)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    fault = next((line for line in lines if line.startswith("Invalid JSON")), None)
    text = (fault or (lines[0] if lines else type(exc).__name__)).split(" [type=")[0]
    return text if len(text) <= 200 else text[:199] + "…"


def _unreadable_text(exc: Exception) -> str:
    """What the server sent that could not be read: the line when it is no JSON, else the
    reason (its JSON is no MCP message)."""
    errors: Callable[[], list[dict[str, Any]]] | None = getattr(exc, "errors", None)  # pydantic
    try:
        sent = errors()[0].get("input") if errors is not None else None
    except (IndexError, TypeError, AttributeError):
        sent = None
    return repr(sent[:200]) if isinstance(sent, str) else _unreadable_reason(exc)


def _expand_home(text: str) -> str:
    return str(Path.home()) + text[1:] if text.startswith("~/") else text


class ServerConnection:
    """A connection to one server, run by its own task; calls come from any task."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        workspace: Path,
        mcp_log: McpLog,
        on_change: Callable[[ServerConnection], None] = lambda c: None,
        start_dir: Path | None = None,
    ) -> None:
        """``start_dir``: the empty folder the person's stdio servers start in (default: the
        one under Vis's data folder, :func:`~vis_core.mcp.launch.start_folder`)."""
        self.config = config
        self.workspace = workspace
        self.start_dir = start_folder() if start_dir is None else start_dir
        self.mcp_log = mcp_log
        self.on_change = on_change
        self.state = State.DISABLED if not config.enabled else State.DISCONNECTED
        self.error: str | None = None
        self.tools: list[ToolInfo] = []
        self.instructions: str | None = None
        self.has_resources = False
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()  # re-listings of its tools
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._closing = asyncio.Event()  # stop() was called (``_stop`` is also set by a drop)
        self._stderr: StderrTail | None = None
        self._last_stderr = ""
        self._last_status: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exited = False  # the stdio server ended on its own
        # set when the server sends a message the SDK cannot read (the answer is lost)
        self._unreadable = asyncio.Event()
        self._unreadable_why = ""
        # lines of its stdout that were no MCP message (skipped), and the first of them
        self.unreadable_lines = 0
        self.first_unreadable: str | None = None
        self._group: int | None = None  # the stdio server's process group while it runs

    # -- state ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def summary(self) -> str:
        """What the server offers, in a line: its configured ``description``, else (once it
        connected) the first line of its instructions; empty without either."""
        lines = (self.instructions or "").strip().splitlines()
        return self.config.description or (lines[0].strip() if lines else "")

    def stderr_tail(self) -> str:
        return self._stderr.text() if self._stderr is not None else self._last_stderr

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error = state, error
        try:
            self.on_change(self)
        except Exception:
            log.exception("MCP state listener failed for %s", self.name)

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background (no-op while connecting or connected)."""
        if not self.config.enabled or (self._task is not None and not self._task.done()):
            return
        self._loop = asyncio.get_running_loop()
        self.unreadable_lines, self.first_unreadable = 0, None  # counted for each start
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._closing = asyncio.Event()
        self._exited = False
        self._set(State.CONNECTING)
        self._task = asyncio.ensure_future(self._run())

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the connection attempt settles; False when it is still running."""
        if self._task is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self._ready.wait()), timeout)
        except TimeoutError:
            return False
        return True

    async def ensure(self) -> Any:
        """The live session: reconnects a dropped connection, waits for one being made."""
        if not self.config.enabled:
            raise ConnectionLost(f"MCP server {self.name!r} is disabled; enable it in /mcp")
        task = self._task
        if task is not None and not task.done() and self._stop.is_set():
            # the connection dropped and is closing: let it end, then connect again
            await asyncio.wait({task}, timeout=CLOSE_WAIT)
        if self.state in (State.DISCONNECTED, State.FAILED, State.NEEDS_SIGN_IN) and (
            self._task is None or self._task.done()
        ):
            self.start()
        await self.wait_ready(None)
        if self._session is None or self.state is not State.CONNECTED:
            state = (
                self.state.value if self.state is State.NEEDS_SIGN_IN else f"is {self.state.value}"
            )
            raise ConnectionLost(
                f"MCP server {self.name!r} {state}" + (f": {self.error}" if self.error else "")
            )
        return self._session

    async def stop(self) -> None:
        """Close the connection: stdin, then SIGTERM and SIGKILL of the server's group. The
        connection's task is told to stop, not cancelled: a cancel landing while the SDK
        stops the server (after initialize timed out) left the server running and the task
        waiting for its output for ever."""
        task = self._task
        self._closing.set()
        self._stop.set()
        await end_tasks(self._tasks)
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=STOP_WAIT)
            if not task.done():  # the SDK could not stop it: end its group, then the task
                group = self._group
                if group is not None:
                    await asyncio.shield(end_group(group))
                task.cancel()
                await asyncio.wait({task}, timeout=STOP_WAIT)
        self._task = None

    async def restart(self) -> None:
        await self.stop()
        self._set(State.DISCONNECTED if self.config.enabled else State.DISABLED)
        self.start()

    def _lost(self) -> None:
        """The stdio server's stderr closed: it exited."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def exited() -> None:
            if not self._stop.is_set():
                self._exited = True
                self._stop.set()

        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(exited)

    async def _run(self) -> None:
        connected = False
        try:
            transport = self.config.transport
            # a stdio command that names no program fails now, not after the SDK's import
            launch = await self._launch() if transport is Transport.STDIO else None
            await self._unless_stopped(in_own_thread("vis-mcp-sdk", lambda: _load_sdk(transport)))
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open(stack, launch)
                if self._closing.is_set():
                    raise _Stopped
                session = await stack.enter_async_context(self._client_session(read, write))
                try:
                    result = await self._unless_stopped(
                        self._retried(
                            lambda: asyncio.wait_for(session.initialize(), self.config.timeout)
                        )
                    )
                except TimeoutError:
                    failure = TimeoutError(
                        f"the server did not answer initialize within "
                        f"{self.config.timeout:g} s (the 'timeout' setting of {self.name!r})"
                    )
                    # failed now, not once the SDK has stopped the server (seconds later)
                    self._set(State.FAILED, self._failure_text(failure))
                    raise failure from None
                self.instructions = (getattr(result, "instructions", None) or "").strip() or None
                caps = getattr(result, "capabilities", None)
                self.has_resources = getattr(caps, "resources", None) is not None
                self._session = session
                await self._unless_stopped(self._list_tools(session))
                connected = True
                self._set(State.CONNECTED)
                self._ready.set()
                await self._stop.wait()
                self._session = None
        except asyncio.CancelledError:
            self._set(State.DISCONNECTED)
            raise
        except BaseException as exc:  # every failure becomes the server's state
            needs = sign_in_needed(exc)
            if _stopped(exc):
                self._set(State.DISCONNECTED)
            elif needs is not None:
                self._set(State.NEEDS_SIGN_IN, needs)
            elif self._last_status == 401:  # a server Vis does not sign in to
                self._set(State.FAILED, self._refused())
            elif connected:
                self._set(State.DISCONNECTED, f"connection lost: {_describe(exc)}")
            else:
                self._set(State.FAILED, self._failure_text(exc))
        else:
            if self.state is State.CONNECTED:
                self._set(State.DISCONNECTED, "the server exited" if self._exited else None)
        finally:
            self._session = None
            group, self._group = self._group, None
            if group is not None:  # what a wrapper left in the background ends too
                await asyncio.shield(end_group(group))
            if self._stderr is not None:
                self._stderr.release()
                # the server has ended: its last lines (why it failed) are read before they
                # are told, not left to the reader thread's turn
                await asyncio.shield(asyncio.to_thread(self._stderr.drained, DRAIN_WAIT))
                self._last_stderr = self._stderr.text()
            if self.unreadable_lines > UNREADABLE_LOGGED:
                log.warning(
                    "MCP server %s wrote %s lines to its stdout that were no MCP message "
                    "(skipped; the first %d are logged above)",
                    self.name,
                    f"{self.unreadable_lines:,}",
                    UNREADABLE_LOGGED,
                )
            self._ready.set()

    async def _unless_stopped(self, work: Awaitable[T]) -> T:
        """``work``'s result, or :class:`_Stopped` once :meth:`stop` is called first."""
        task = asyncio.ensure_future(work)
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait({task, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        if task.cancelled():
            raise _Stopped
        return task.result()

    def _failure_text(self, exc: BaseException) -> str:
        text = _describe(exc)
        stdio = self.config.transport is Transport.STDIO
        folder = self._cwd() if stdio else None
        if isinstance(exc, OSError) and folder is not None and not folder.is_dir():
            said = "is not a folder" if folder.exists() else "does not exist"
            text = f'cannot start {self.config.command!r}: its "cwd" {folder} {said}'
        elif isinstance(exc, (CommandNotFound, CommandNotExecutable, CommandNotProgram)):
            text = f"cannot start {self.config.command!r}: {exc}"
            relative = not os.path.isabs(_expand_home(self.config.command))
            if (
                isinstance(exc, CommandNotFound)
                and relative
                and self.config.source is not Source.PROJECT
            ):
                text += (
                    f" (your servers start in {self.start_dir}, not in the workspace, with a "
                    "PATH that leaves out the workspace's folders: give the command's full "
                    'path, or a "cwd" in mcp.json)'
                )
        elif stdio and "connection closed" in text.lower():
            text = "the server process ended before it answered initialize"
        elif not stdio and type(_first(exc)).__name__ == "ConnectError":  # httpx's, not loaded
            where = urlsplit(self.config.url).netloc.rpartition("@")[2]  # no credentials
            text = f"nothing answers at {where}: is the server running? ({text})"
        status = self._last_status
        if not stdio and status is not None and status >= 400 and f"HTTP {status}" not in text:
            text += f" (HTTP {status})"
        http = self.config.transport is Transport.HTTP
        if http and urlsplit(self.config.url).path.rstrip("/").endswith("/sse"):
            text += f" ({SSE_HINT})"
        return text

    def _cwd(self) -> Path | None:
        """The folder the entry's ``cwd`` names (relative to the workspace), if it names one."""
        if not self.config.cwd:
            return None
        return (self.workspace / _expand_home(self.config.cwd)).resolve()

    def _refused(self) -> str:
        """Why a 401 failed a server Vis does not sign in to with OAuth: one with its own
        ``Authorization`` header (signing in would not replace it), or an editor's."""
        if uses_oauth(self.config):
            return (
                "the server answered 401 Unauthorized to the headers the editor gave (Vis signs "
                "in with OAuth only to the servers of mcp.json)"
            )
        if self.config.source is Source.CLIENT:
            return REFUSED_HEADER
        sign_in = f"`vis mcp login {self.name}`"
        return f"{REFUSED_HEADER}, or remove the header to sign in with OAuth ({sign_in})"

    def _surroundings(self) -> tuple[Path | None, dict[str, str] | None]:
        """Where the server (and an ``!command`` value) starts, and the environment values are
        expanded in. The person's own servers (not a project's) start in :attr:`start_dir`
        with a ``PATH`` that does not reach into the workspace or its project; a project's
        servers in the workspace with Vis's environment (``None``: as Vis)."""
        if self.config.source is Source.PROJECT:
            return None, None
        environ = dict(os.environ)
        environ["PATH"] = self._path_outside(environ.get("PATH", os.defpath))
        return private_dir(self.start_dir), environ

    def _path_outside(self, value: str) -> str:
        return path_outside(value, (self.workspace, find_project_root(self.workspace)))

    async def _launch(self) -> _Launch:
        """How the stdio server starts: its program under a keeper, its environment and
        folder. Raises as :func:`~vis_core.mcp.launch.command_file` does when its command is
        no program it could start."""
        config = self.config
        start, environ = await asyncio.to_thread(self._surroundings)
        env = await self._values(config.env, "env", environ, start)
        if environ is not None:  # the entry's own PATH, too, stays out of the workspace
            env["PATH"] = self._path_outside(env.get("PATH", environ["PATH"]))
        cwd = self._cwd() or (self.workspace if start is None else start)
        # as the server finds its command: by its own PATH, empty too, else by Vis's
        path = env["PATH"] if "PATH" in env else os.environ.get("PATH", os.defpath)
        args = [_expand_home(a) for a in config.args]
        command, args = await asyncio.to_thread(kept, _expand_home(config.command), args, cwd, path)
        return _Launch(command, args, env or None, cwd)

    async def _open(
        self, stack: contextlib.AsyncExitStack, launch: _Launch | None
    ) -> tuple[Any, Any]:
        """The streams to the server: the stdio server ``launch`` starts, else the HTTP one."""
        config = self.config
        if launch is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=launch.command, args=launch.args, env=launch.env, cwd=launch.cwd
            )
            self._stderr = StderrTail(on_close=self._lost)
            try:
                streams = await stack.enter_async_context(
                    stdio_client(params, errlog=self._stderr.writer)
                )
                self._group = await asyncio.to_thread(
                    spawned_with_stderr, self._stderr.writer.fileno()
                )
            finally:
                self._stderr.release()
            return streams
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        from vis_core.providers.tls import verified_context

        start, environ = await asyncio.to_thread(self._surroundings)
        headers = await self._values(config.headers, "header", environ, start)
        if config.transport is Transport.SSE:
            from mcp.client.sse import sse_client

            return await stack.enter_async_context(sse_client(config.url, headers=headers))

        async def record(response: Any) -> None:
            self._last_status = response.status_code

        auth = None
        # no Authorization header: the stored sign-in, if any (refreshed; never a browser)
        if config.source is not Source.CLIENT and uses_oauth(config):
            from vis_core.mcp.oauth import make_provider
            from vis_core.paths import VisPaths

            secrets = VisPaths.from_env().secrets_file
            auth = await make_provider(config, secrets, environ=environ, cwd=start)
        client = httpx2.AsyncClient(
            headers=headers,
            auth=auth,
            timeout=httpx2.Timeout(30.0, read=300.0),
            event_hooks={"response": [record]},
            verify=verified_context(),
        )
        await stack.enter_async_context(client)
        return await stack.enter_async_context(
            streamable_http_client(config.url, http_client=client)
        )

    async def _values(
        self,
        pairs: tuple[tuple[str, str], ...],
        what: str,
        environ: dict[str, str] | None,
        start: Path | None,
    ) -> dict[str, str]:
        """``env`` or ``headers`` as the server gets them: an editor's values as it gave them
        (never expanded: no ``${VAR}`` of Vis's environment, no ``!command``), redacted like
        keys; a file's or extension's expanded (``${VAR}``, ``!command``)."""
        headers = what == "header"
        if self.config.source is Source.CLIENT:
            values = dict(pairs)
            remember_secrets(v for k, v in pairs if headers or key_name(k))
            return values
        values = await asyncio.to_thread(expand_map, pairs, what, environ, start)
        remember_secrets(expanded_keys(pairs, values, all_keys=headers, environ=environ))
        return values

    def _client_session(self, read: Any, write: Any) -> Any:
        import mcp_types as types
        from mcp.client.session import ClientSession

        from vis_core import __version__

        async def on_log(params: Any) -> None:
            data = params.data
            message = data if isinstance(data, str) else repr(data)
            level = getattr(params.level, "value", params.level)
            self.mcp_log.write(self.name, str(level), params.logger, message)

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                keep(self._tasks, asyncio.ensure_future(self._relist()))
            elif isinstance(message, Exception) and self.config.transport is not Transport.HTTP:
                # a line of stdio (or an SSE event) the SDK could not read is dropped, and an
                # answer among them is lost; streamable HTTP fails such a request itself
                self._unreadable_why = _unreadable_reason(message)
                self.unreadable_lines += 1
                if self.first_unreadable is None:
                    self.first_unreadable = _unreadable_text(message)
                if self.unreadable_lines <= UNREADABLE_LOGGED:
                    log.warning(
                        "MCP server %s wrote a line to its stdout that is no MCP message "
                        "(skipped): %s (%s)%s",
                        self.name,
                        _unreadable_text(message),
                        self._unreadable_why,
                        "; further ones are counted"
                        if self.unreadable_lines == UNREADABLE_LOGGED
                        else "",
                    )
                self._unreadable.set()
                self._unreadable = asyncio.Event()  # the next calls wait on a new one

        return ClientSession(
            read,
            write,
            logging_callback=on_log,
            message_handler=on_message,
            client_info=types.Implementation(name="vis", version=__version__),
        )

    # -- requests ------------------------------------------------------------------------

    async def _relist(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            await self._list_tools(session)
        except Exception as exc:
            log.warning("MCP server %s: listing tools after a change failed: %s", self.name, exc)

    async def _list_tools(self, session: Any) -> None:
        listed: list[Any] = []
        cursor = None
        while True:
            from mcp_types import PaginatedRequestParams

            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._retrying(
                lambda p=params: session.list_tools(params=p), "listing its tools"
            )
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        names = tool_names((self.name, t.name) for t in listed)
        self.tools = [
            ToolInfo(
                server=self.name,
                tool=t.name,
                name=names[self.name, t.name],
                description=(t.description or "").strip(),
                input_schema=dict(t.input_schema or {}),
                output_schema=dict(t.output_schema) if t.output_schema else None,
                annotations=(
                    t.annotations.model_dump(by_alias=True, exclude_none=True)
                    if t.annotations is not None
                    else {}
                ),
            )
            for t in listed
        ]
        self._set(self.state, self.error)  # at once: the manager names them apart from others'

    async def _retried(self, attempt: Callable[[], Awaitable[T]], retries: int = RETRIES) -> T:
        """``attempt()``'s result, made again after an HTTP network error or a 408, 429 or 5xx
        up to ``retries`` times; the last failure is raised as it came."""
        for tried in range(retries + 1):
            self._last_status = None
            try:
                return await attempt()
            except Exception as exc:
                if not self._transient(exc) or tried == retries:
                    raise
            await asyncio.sleep(RETRY_DELAYS[tried])
        raise AssertionError("unreachable")

    async def _retrying(
        self,
        request: Callable[[], Awaitable[T]],
        what: str,
        retries: int = RETRIES,
        heard: Callable[[], float] | None = None,
    ) -> T:
        """Listing tools: HTTP network errors and 408/429/5xx are retried twice (as
        ``initialize`` is); reading and listing resources (``retries=RESOURCE_RETRIES``) once;
        a tool call (0) not. Each try waits as :meth:`_answer` does (``what``: what Vis was
        doing, for its errors)."""
        try:
            return await self._retried(lambda: self._answer(request(), what, heard=heard), retries)
        except Exception as exc:
            raise self._wrap(exc) from None

    def _transient(self, exc: BaseException) -> bool:
        if self.config.transport is not Transport.HTTP:
            return False
        status = self._last_status
        if status is not None and (status in TRANSIENT or 500 <= status < 600):
            return True
        import httpx2

        return isinstance(exc, httpx2.TransportError)

    def _wrap(self, exc: BaseException) -> Exception:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        if isinstance(exc, MCPError):
            message = str(getattr(exc, "error", None) and exc.error.message or exc)
            if self.config.transport is Transport.HTTP and self._last_status == 404:
                # the streamable HTTP spec: a 404 for a session id means that session is gone,
                # and the client starts a new one
                self._stop.set()
                return SessionExpired(
                    f"MCP server {self.name!r} no longer knows Vis's session ({message}, HTTP "
                    "404: it restarted or ended the session); it reconnects on the next call"
                )
            if exc.code == CONNECTION_CLOSED or "closed" in message.lower():
                self._stop.set()
                return ConnectionLost(
                    f"MCP server {self.name!r} closed the connection; it reconnects on the "
                    "next call"
                )
            failed = self._last_status is not None and self._last_status >= 400
            # a server's own error arrives in a 200 answer: no transport fault to name
            status = f" (HTTP {self._last_status})" if failed else ""
            return McpCallError(f"MCP server {self.name!r}: {message}{status}")
        if isinstance(exc, Exception):
            return exc
        return RuntimeError(_describe(exc))

    async def _on_session(
        self,
        request: Callable[[Any], Awaitable[T]],
        what: str,
        retries: int = 0,
        heard: Callable[[], float] | None = None,
    ) -> T:
        """``request(session)``'s answer on the live session (:meth:`_retrying` with
        ``retries``), made once more on a new session when the server no longer knew the old
        one: it ran nothing of it (:class:`SessionExpired`)."""
        for again in (False, True):
            session = await self.ensure()
            try:
                return await self._retrying(partial(request, session), what, retries, heard)
            except SessionExpired:
                if again:
                    raise
        raise AssertionError("unreachable")

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> Any:
        """``tools/call``; the ``timeout`` restarts with every progress notification. It is
        not made again after a transient error (the server may have run it), only on a new
        session when the server did not know the old one."""
        last = time.monotonic()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            nonlocal last
            last = time.monotonic()
            if on_progress is not None:
                on_progress(value, total, message)

        def request(session: Any) -> Awaitable[Any]:
            nonlocal last
            last = time.monotonic()
            return session.call_tool(tool, arguments, progress_callback=progress)

        result = await self._on_session(request, f"running {tool!r}", heard=lambda: last)
        # a list the server said changed during the call is read before it returns: the
        # tools it added are callable, those it withdrew gone, in the rest of the block
        relisting = [task for task in self._tasks if not task.done()]
        if relisting:
            await asyncio.wait(relisting, timeout=self.config.timeout)
        return result

    async def _answer(
        self, request: Awaitable[T], what: str, *, heard: Callable[[], float] | None = None
    ) -> T:
        """``request``'s answer, waited for up to the server's ``timeout`` since it was sent
        (or since ``heard()``: its last progress). Fails at once when the server sends a
        message Vis cannot read meanwhile: the answer may be that message, lost."""
        task = asyncio.ensure_future(request)
        unreadable = asyncio.ensure_future(self._unreadable.wait())
        sent, timeout = time.monotonic(), self.config.timeout
        try:
            while True:
                last = heard() if heard is not None else sent
                done, _ = await asyncio.wait(
                    {task, unreadable},
                    timeout=max(last + timeout - time.monotonic(), 0),
                    return_when="FIRST_COMPLETED",
                )
                if task in done:
                    return task.result()
                if unreadable in done:
                    failure: Exception = McpCallError(
                        f"MCP server {self.name!r} sent a message Vis cannot read while "
                        f"{what}: {self._unreadable_why}"
                    )
                elif time.monotonic() - (heard() if heard is not None else sent) >= timeout:
                    restart = "; progress notifications restart it" if heard is not None else ""
                    failure = TimeoutError(
                        f"MCP server {self.name!r} sent nothing for {timeout:g} s while "
                        f"{what} (its 'timeout' setting{restart})"
                    )
                else:
                    continue
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                raise failure
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            unreadable.cancel()

    async def list_resources(self, cursor: str | None = None, *, templates: bool = False) -> Any:
        """One page of the server's resources (of its resource templates with ``templates``)."""
        from mcp_types import PaginatedRequestParams

        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        what = "listing resource templates" if templates else "listing resources"
        return await self._on_session(
            lambda s: (s.list_resource_templates if templates else s.list_resources)(params=params),
            what,
            RESOURCE_RETRIES,
        )

    async def read_resource(self, uri: str) -> Any:
        return await self._on_session(
            lambda s: s.read_resource(uri), f"reading {uri!r}", RESOURCE_RETRIES
        )
