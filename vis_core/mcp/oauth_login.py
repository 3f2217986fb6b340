"""Sign in to and out of an HTTP server: the browser, the 127.0.0.1 redirect listener, a pasted
redirect, and a first connection with the new tokens."""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared.auth import AuthorizationCodeResult
from pydantic import AnyUrl

from vis_core.mcp.config import ServerConfig
from vis_core.mcp.oauth import Interaction, SignInRequired, make_provider
from vis_core.mcp.oauth_session import said_by, uses_oauth
from vis_core.mcp.oauth_settings import (
    is_loopback,
    listen_at,
    redirect_uri,
)
from vis_core.mcp.oauth_store import CredentialStore, SecretTokenStorage
from vis_core.mcp.values import ExpansionError, expand_map
from vis_core.system.browser import open_browser

log = logging.getLogger(__name__)

SIGN_IN_WAIT = 600.0  # seconds Vis waits for the person to approve the sign-in
REQUEST_LIMIT = 16_384
DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>Vis</title>"
    "<p>{text}</p><p>You can close this tab and return to Vis.</p>"
)


class SignInFailed(Exception):
    """A sign-in did not complete; the message says why and what to do."""


# what a failed sign-in says as it came (anything else is told with its type)
SIGN_IN_ERRORS = (
    SignInFailed,
    SignInRequired,
    ExpansionError,
    OAuthFlowError,
    OAuthTokenError,
    OAuthRegistrationError,
)


def _query_result(query: str) -> AuthorizationCodeResult:
    """The authorization response in a redirect's query; ``SignInFailed`` for an error."""
    params = {k: v[0] for k, v in parse_qs(query).items() if v}
    if "error" in params:
        detail = params.get("error_description", "")
        raise SignInFailed(
            f"the authorization server refused the sign-in: {params['error']}"
            + (f" ({detail})" if detail else "")
        )
    if not params.get("code"):
        raise SignInFailed("the redirect carries no authorization code")
    return AuthorizationCodeResult(
        code=params["code"], state=params.get("state"), iss=params.get("iss")
    )


class RedirectListener:
    """Waits for the authorization redirect on a loopback address (first valid one wins)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.port = 0
        self.result: asyncio.Future[AuthorizationCodeResult] = (
            asyncio.get_running_loop().create_future()
        )
        self._servers: list[asyncio.Server] = []

    async def start(self, port: int | None, host: str = "127.0.0.1") -> None:
        """Listen on ``host`` (``localhost``: 127.0.0.1, and ::1 on the same port when it can)."""
        first = "::1" if host.strip("[]") == "::1" else "127.0.0.1"
        server = await asyncio.start_server(self._handle, first, port or 0)
        self._servers.append(server)
        self.port = server.sockets[0].getsockname()[1]
        if host == "localhost":
            with contextlib.suppress(OSError):
                self._servers.append(await asyncio.start_server(self._handle, "::1", self.port))

    async def close(self) -> None:
        for server in self._servers:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers = []

    def offer(self, url: str) -> str | None:
        """A redirected address the person pasted; the problem with it, if any."""
        parts = urlsplit(url.strip())
        if not parts.query:
            return "paste the whole address the browser was sent to (it holds ?code=…&state=…)"
        try:
            result = _query_result(parts.query)
        except SignInFailed as exc:
            if not self.result.done():
                self.result.set_exception(exc)
            return None
        if not self.result.done():
            self.result.set_result(result)
        return None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return
        status, text = 404, "Not found."
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        parts = urlsplit(target)
        if method == "GET" and parts.path == self.path and len(head) <= REQUEST_LIMIT:
            try:
                result = _query_result(parts.query)
            except SignInFailed as exc:
                status, text = 400, f"Sign-in failed: {exc}"
                if not self.result.done():
                    self.result.set_exception(exc)
            else:
                status, text = 200, "Vis is signed in."
                if not self.result.done():
                    self.result.set_result(result)
        body = DONE_PAGE.format(text=html.escape(text, quote=False)).encode()
        writer.write(
            f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
            "Content-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(Exception):
            await writer.drain()
        writer.close()


def _describe(exc: BaseException) -> str:
    """The innermost error of a transport's exception group, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_server(config: ServerConfig) -> None:
    if not config.url:
        raise SignInFailed(
            f"MCP server {config.name!r} is a stdio server; sign-in is for HTTP servers"
        )
    if not uses_oauth(config):
        raise SignInFailed(
            f"MCP server {config.name!r} has an Authorization header in mcp.json; OAuth applies "
            "to HTTP servers without one (remove the header to sign in)"
        )


async def sign_in(
    config: ServerConfig,
    secrets_file: Path,
    *,
    show: Callable[[str, bool], Awaitable[None] | None],
    listening: Callable[[RedirectListener], None] = lambda listener: None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    wait: float = SIGN_IN_WAIT,
) -> str:
    """Sign in to ``config``'s server: register Vis if needed, show the authorization page
    (``show(url, opened)``), receive the redirect, store the tokens, connect once with them.
    ``listening`` receives the listener (to hand it a pasted redirect)."""
    check_server(config)
    store = CredentialStore(secrets_file, config.name, config.url)
    settings = config.oauth
    host, port, path = listen_at(settings)
    listener = RedirectListener(path)
    reuse = (
        await _stored_port(store)
        if port is None and not (settings and settings.client_id)
        else None
    )
    try:
        await listener.start(reuse or port, host)
    except OSError as exc:
        if reuse is None:
            raise SignInFailed(
                f"cannot listen for the sign-in redirect on {host}:{port}: {exc.strerror}; "
                "free the port or change oauth.callbackPort"
            ) from None
        await SecretTokenStorage(store).forget_client()  # registered for a port now taken
        await listener.start(None, host)
    listening(listener)

    async def shown(url: str) -> None:
        opened = await asyncio.to_thread(open_browser, url, (Path.cwd(),))
        result = show(url, opened)
        if result is not None:
            await result

    async def redirected() -> AuthorizationCodeResult:
        try:
            return await asyncio.wait_for(asyncio.shield(listener.result), wait)
        except TimeoutError:
            raise SignInFailed(
                f"no sign-in arrived within {wait / 60:g} minutes; run `vis mcp login "
                f"{config.name}` again"
            ) from None

    redirect = redirect_uri(settings, listener.port)
    if not (settings and settings.client_id):
        stored = await SecretTokenStorage(store).get_client_info()
        wanted = str(AnyUrl(redirect))  # as the stored record spells it
        if stored is not None and wanted not in [str(u) for u in stored.redirect_uris or []]:
            await SecretTokenStorage(store).forget_client()  # registered for another address
    interaction = Interaction(redirect, shown, redirected)
    provider: Any = None
    try:
        provider = await make_provider(config, secrets_file, interaction, environ=environ, cwd=cwd)
        tools = await _connect(config, provider, environ, cwd)
    except Exception as exc:
        text = said_by(exc, SIGN_IN_ERRORS) or _describe(exc)
        if provider is not None and provider.context.oauth_metadata is None:
            text += (
                "; Vis found no OAuth authorization server for it: if it takes a token instead, "
                'set "headers": {"Authorization": "Bearer ${TOKEN}"} in mcp.json, or point '
                '"oauth": {"authServerMetadataUrl": …} at the right authorization server'
            )
        raise SignInFailed(f"sign-in to MCP server {config.name!r} failed: {text}") from None
    finally:
        await listener.close()
    return f"Signed in to MCP server {config.name!r} ({tools} tool{'s' if tools != 1 else ''})."


async def _stored_port(store: CredentialStore) -> int | None:
    """The port of the stored client's redirect URI: the registration stays valid on it."""
    client = await SecretTokenStorage(store).get_client_info()
    uris = getattr(client, "redirect_uris", None) or []
    for uri in uris:
        parts = urlsplit(str(uri))
        if is_loopback(parts.hostname) and parts.port:
            return parts.port
    return None


async def _connect(
    config: ServerConfig, provider: Any, environ: Mapping[str, str] | None, cwd: Path | None
) -> int:
    import httpx2
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from vis_core import __version__
    from vis_core.providers.tls import verified_context

    headers = await asyncio.to_thread(expand_map, config.headers, "header", environ, cwd)
    async with (
        httpx2.AsyncClient(
            headers=headers,
            auth=provider,
            timeout=httpx2.Timeout(30.0, read=300.0),
            verify=verified_context(),
        ) as client,
        streamable_http_client(config.url, http_client=client) as (read, write),
        ClientSession(
            read, write, client_info=types.Implementation(name="vis", version=__version__)
        ) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        return len(listed.tools)


def sign_out(config: ServerConfig, secrets_file: Path) -> str:
    """Delete the server's stored tokens and registered client."""
    if CredentialStore(secrets_file, config.name, config.url).delete():
        return f"Signed out of MCP server {config.name!r}: its stored credentials are deleted."
    return f"MCP server {config.name!r} has no stored sign-in."


def pasted_lines(listener: RedirectListener, say: Callable[[str], Any]) -> None:
    """Read redirected addresses the person pastes on standard input (a thread; ends at EOF)."""
    loop = asyncio.get_running_loop()

    def read() -> None:
        while not listener.result.done():
            try:
                line = sys.stdin.readline()
            except (OSError, ValueError):
                return
            if not line:
                return
            if line.strip():

                def offer(text: str = line) -> None:
                    problem = listener.offer(text)
                    if problem:
                        say(problem)

                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(offer)

    import threading

    threading.Thread(target=read, name="vis-sign-in-paste", daemon=True).start()


async def login_server(
    manager: Any,
    name: str,
    *,
    show: Callable[[str, bool], Awaitable[None] | None],
    listening: Callable[[RedirectListener], None] = lambda listener: None,
) -> str:
    """``/mcp login NAME``: sign in to a session's server, then reconnect it with the tokens."""
    from vis_core.paths import VisPaths

    conn = manager.require(name)
    start, environ = await asyncio.to_thread(conn._surroundings)
    done = await sign_in(
        conn.config,
        VisPaths.from_env().secrets_file,
        show=show,
        listening=listening,
        environ=environ,
        cwd=start,
    )
    if conn.config.enabled:
        await manager.reconnect(conn.name)
    return done


async def logout_server(manager: Any, name: str) -> str:
    """``/mcp logout NAME``: delete the stored sign-in; the server asks for a new one."""
    from vis_core.paths import VisPaths

    conn = manager.require(name)
    check_server(conn.config)
    done = await asyncio.to_thread(sign_out, conn.config, VisPaths.from_env().secrets_file)
    if conn.config.enabled:
        await manager.reconnect(conn.name)
    return done
