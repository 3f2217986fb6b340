"""What a connection needs of OAuth, loaded only when an HTTP server connects."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vis_core.mcp.config import ServerConfig


def uses_oauth(config: ServerConfig) -> bool:
    """OAuth applies to HTTP servers without an ``Authorization`` header."""
    return bool(config.url) and not any(k.lower() == "authorization" for k, _ in config.headers)


async def make_provider(
    config: ServerConfig,
    secrets_file: Path,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Any:
    """The auth of a session's connection: stored tokens, refreshed; never a browser."""
    from vis_core.mcp import oauth

    return await oauth.make_provider(config, secrets_file, None, environ=environ, cwd=cwd)


def sign_in_needed(exc: BaseException) -> str | None:
    """The sign-in message when ``exc`` (or an exception inside it) asks for one."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = sign_in_needed(inner)
            if found is not None:
                return found
        return None
    from vis_core.mcp.oauth import SignInRequired

    if isinstance(exc, SignInRequired):
        return str(exc)
    if exc.__cause__ is not None:
        return sign_in_needed(exc.__cause__)
    return None
