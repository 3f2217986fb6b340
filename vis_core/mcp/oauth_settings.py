"""The ``oauth`` object of an HTTP ``mcpServers`` entry, validated, and the loopback rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
CALLBACK_PATH = "/callback"
FIELDS = (
    "clientId",
    "clientSecret",
    "callbackPort",
    "callbackUrl",
    "scope",
    "clientName",
    "authServerMetadataUrl",
)


@dataclass(frozen=True)
class OAuthSettings:
    """How Vis signs in to one server (every field optional)."""

    client_id: str | None = None
    client_secret: str | None = None  # as written: may be ``${VAR}`` or ``!command``
    callback_port: int | None = None
    callback_url: str | None = None
    scope: str | None = None
    client_name: str | None = None
    auth_server_metadata_url: str | None = None


def is_loopback(host: str | None) -> bool:
    return (host or "").strip("[]").lower() in LOOPBACK_HOSTS


def secure_or_loopback(url: str) -> bool:
    """HTTPS, or HTTP on ``localhost``, ``127.0.0.1`` or ``[::1]``."""
    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname))


def _text(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'oauth.{key}' must be a non-empty string")
    return value.strip()


def parse_oauth(raw: Any) -> OAuthSettings | None:
    """The ``oauth`` object; ``ValueError`` names the field that is wrong."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError('\'oauth\' must be an object, e.g. {"clientId": "my-client"}')
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise ValueError(f"'oauth' has unknown fields {unknown}; known: {', '.join(FIELDS)}")
    port = raw.get("callbackPort")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535
    ):
        raise ValueError("'oauth.callbackPort' must be a port number (1-65535)")
    callback_url = _text(raw, "callbackUrl")
    if callback_url is not None:
        parts = urlsplit(callback_url)
        if parts.scheme != "http" or not is_loopback(parts.hostname):
            raise ValueError(
                "'oauth.callbackUrl' must use HTTP on localhost, 127.0.0.1 or [::1], "
                f"not {callback_url!r}"
            )
        try:
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError:
            raise ValueError(
                f"'oauth.callbackUrl' has a malformed port: {callback_url!r}"
            ) from None
    metadata = _text(raw, "authServerMetadataUrl")
    if metadata is not None and not secure_or_loopback(metadata):
        raise ValueError(
            "'oauth.authServerMetadataUrl' must use HTTPS, except on localhost, 127.0.0.1 or "
            f"[::1], not {metadata!r}"
        )
    return OAuthSettings(
        client_id=_text(raw, "clientId"),
        client_secret=_text(raw, "clientSecret"),
        callback_port=port,
        callback_url=callback_url,
        scope=" ".join((_text(raw, "scope") or "").split()) or None,
        client_name=_text(raw, "clientName"),
        auth_server_metadata_url=metadata,
    )


def redirect_uri(settings: OAuthSettings | None, port: int) -> str:
    """The redirect URI for a listener on ``port``: ``callbackUrl`` exactly as written when it
    names a port, with ``port`` added when it does not; else ``http://127.0.0.1:PORT/callback``."""
    url = settings.callback_url if settings else None
    if url is None:
        return f"http://127.0.0.1:{port}{CALLBACK_PATH}"
    parts = urlsplit(url)
    if parts.port is not None:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return url.replace(f"//{parts.netloc}", f"//{host}:{port}", 1)


def listen_at(settings: OAuthSettings | None) -> tuple[str, int | None, str]:
    """Where the redirect listener waits: the host the redirect comes to (``127.0.0.1``
    unless ``callbackUrl`` names another), the port it must use (None: any free port) and
    the path."""
    if settings is None or settings.callback_url is None:
        return "127.0.0.1", settings.callback_port if settings else None, CALLBACK_PATH
    parts = urlsplit(settings.callback_url)
    port = parts.port if parts.port is not None else settings.callback_port
    return (parts.hostname or "127.0.0.1").lower(), port, parts.path or "/"
