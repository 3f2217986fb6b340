"""What a connection needs of OAuth, loaded only when an HTTP server connects."""

from __future__ import annotations

import sys
from typing import Any

from vis_core.mcp.config import ServerConfig


def uses_oauth(config: ServerConfig) -> bool:
    """OAuth applies to HTTP servers without an ``Authorization`` header."""
    return bool(config.url) and not any(k.lower() == "authorization" for k, _ in config.headers)


def said_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> str | None:
    """What the first exception of ``kinds`` in ``exc`` says: ``exc`` itself, one in the
    exception group a transport made of it, or its cause."""
    if isinstance(exc, BaseExceptionGroup):
        return next(filter(None, (said_by(inner, kinds) for inner in exc.exceptions)), None)
    if isinstance(exc, kinds):
        return str(exc)
    return None if exc.__cause__ is None else said_by(exc.__cause__, kinds)


def sign_in_needed(exc: BaseException) -> str | None:
    """The sign-in message when ``exc`` (or an exception inside it) asks for one. None before
    :mod:`~vis_core.mcp.oauth` is imported (nothing could ask then): importing it imports the
    SDK, a second of CPU on the loop for a server that failed before it needed the SDK."""
    oauth = sys.modules.get("vis_core.mcp.oauth")
    return None if oauth is None else said_by(exc, (oauth.SignInRequired,))


async def reconnect_signed_in(manager: Any) -> None:
    """Before a turn: servers waiting for sign-in that were signed in since (``vis mcp login``
    in another shell) connect with the new credentials, each up to its ``timeout``."""
    import asyncio

    from vis_core.mcp.client import State
    from vis_core.mcp.oauth_store import CredentialStore
    from vis_core.paths import VisPaths

    secrets = VisPaths.from_env().secrets_file
    waiting = [
        conn
        for conn in manager.connections()
        if conn.state is State.NEEDS_SIGN_IN and conn.config.enabled and uses_oauth(conn.config)
    ]
    ready = []
    for conn in waiting:
        store = CredentialStore(secrets, conn.config.name, conn.config.url)
        try:
            signed_in = await asyncio.to_thread(store.signed_in)
        except ValueError:  # an unreadable secrets file: the connection says so when used
            continue
        if signed_in:
            ready.append(conn)
    for conn in ready:
        await conn.restart()
    async with asyncio.TaskGroup() as group:
        for conn in ready:
            group.create_task(conn.wait_ready(conn.config.timeout))
