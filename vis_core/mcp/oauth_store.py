"""A server's OAuth credentials (tokens, registered client) in Vis's ``secrets`` file (0600).

One entry per server name and URL: servers with the same URL under different names sign in
separately; the same name and URL in different ``mcp.json`` files share one sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vis_core.mcp.config import server_key
from vis_core.settings.storage import SecretsFile
from vis_core.system.redaction import remember_secrets

PREFIX = "mcp-oauth:"


def secret_id(name: str, url: str) -> str:
    """The id of a server's credentials in the secrets file."""
    return f"{PREFIX}{server_key(name)}:{url}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer of the secrets file at a time (``vis mcp login`` beside a running session)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class CredentialStore:
    """Reads and writes one server's entry; every value read is redacted from then on."""

    def __init__(self, secrets_file: Path, name: str, url: str) -> None:
        self.file = SecretsFile(secrets_file)
        self.id = secret_id(name, url)

    def read(self) -> dict[str, Any]:
        raw = self.file.values().get(self.id)  # an unreadable file raises SettingsFileError
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        _remember(data)
        return data

    def update(self, **changes: Any) -> None:
        with _locked(self.file.path):
            data = self.read()
            data.update(changes)
            data = {k: v for k, v in data.items() if v is not None}
            _remember(data)
            self.file.write(self.id, json.dumps(data, sort_keys=True) if data else None)

    def delete(self) -> bool:
        """Forget the tokens and the registered client; False when there were none."""
        with _locked(self.file.path):
            if self.id not in self.file.values():
                return False
            self.file.write(self.id, None)
            return True

    def signed_in(self) -> bool:
        return bool(self.read().get("tokens"))


def _remember(data: dict[str, Any]) -> None:
    tokens = data.get("tokens") or {}
    client = data.get("client") or {}
    remember_secrets(
        str(v)
        for v in (
            tokens.get("access_token"),
            tokens.get("refresh_token"),
            client.get("client_secret"),
        )
        if v
    )


class SecretTokenStorage:
    """The SDK's ``TokenStorage`` over :class:`CredentialStore`; also keeps the absolute expiry
    time, so a token read back in another process is refreshed once it has expired."""

    def __init__(self, store: CredentialStore, *, ignore_tokens: bool = False) -> None:
        self.store = store
        self.ignore_tokens = ignore_tokens  # a sign-in: never send the old tokens

    async def _stored(self, key: str, model: Any) -> Any:
        """The entry's ``key`` as the pydantic ``model`` (None: not stored, or not one)."""
        value = (await asyncio.to_thread(self.store.read)).get(key)
        if not isinstance(value, dict):
            return None
        try:
            return model.model_validate(value)
        except ValueError:
            return None

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return None if self.ignore_tokens else await self._stored("tokens", OAuthToken)

    async def expires_at(self) -> float | None:
        if self.ignore_tokens:
            return None
        value = (await asyncio.to_thread(self.store.read)).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def set_tokens(self, tokens: Any) -> None:
        expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in else None
        self.ignore_tokens = False
        await asyncio.to_thread(
            self.store.update,
            tokens=tokens.model_dump(mode="json", exclude_none=True),
            expires_at=expires_at,
        )

    async def discovered(self) -> tuple[Any, Any] | None:
        """The authorization server metadata (and the resource's) of the last sign-in."""
        from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata

        data = await asyncio.to_thread(self.store.read)
        found = data.get("metadata")
        if not isinstance(found, dict) or not isinstance(found.get("server"), dict):
            return None
        try:
            server = OAuthMetadata.model_validate(found["server"])
            resource = found.get("resource")
            prm = ProtectedResourceMetadata.model_validate(resource) if resource else None
        except ValueError:
            return None
        return server, prm

    async def set_discovered(self, server: Any, resource: Any) -> None:
        if server is None:
            return
        found = {"server": server.model_dump(mode="json", exclude_none=True)}
        if resource is not None:
            found["resource"] = resource.model_dump(mode="json", exclude_none=True)
        await asyncio.to_thread(self.store.update, metadata=found)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        return await self._stored("client", OAuthClientInformationFull)

    async def set_client_info(self, client_info: Any) -> None:
        await asyncio.to_thread(
            self.store.update, client=client_info.model_dump(mode="json", exclude_none=True)
        )

    async def forget_client(self) -> None:
        await asyncio.to_thread(self.store.update, client=None)
