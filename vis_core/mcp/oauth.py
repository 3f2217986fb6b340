"""OAuth for HTTP servers: the SDK's client provider with Vis's storage, checks and messages."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    extract_field_from_www_auth,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
)

from vis_core.mcp.config import ServerConfig
from vis_core.mcp.oauth_settings import OAuthSettings, secure_or_loopback
from vis_core.mcp.oauth_store import CredentialStore, SecretTokenStorage
from vis_core.mcp.values import expand
from vis_core.providers.tls import verified_context

CLIENT_NAME = "vis"
PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"


def sign_in_hint(name: str) -> str:
    """What to do when a server needs sign-in."""
    return f'select "Sign in" in /mcp, run `/mcp login {name}`, or run `vis mcp login {name}`'


class SignInRequired(Exception):
    """The server wants a (new) sign-in; a session never opens a browser by itself."""

    def __init__(self, name: str, why: str = "the server answered 401 Unauthorized") -> None:
        super().__init__(f"{why}; {sign_in_hint(name)}")
        self.server = name


class UnsafeAuthorizationServer(OAuthFlowError):
    """The server's OAuth metadata points somewhere Vis will not send a person or a secret."""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        port = None
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


@dataclass(frozen=True)
class Interaction:
    """How a sign-in reaches the person: the page to open and the redirect to wait for."""

    redirect_uri: str
    show: Callable[[str], Awaitable[None]]  # opens the browser (if any) and shows the URL
    wait: Callable[[], Awaitable[AuthorizationCodeResult]]  # the redirect, however it comes


class VisOAuthProvider(OAuthClientProvider):
    """The SDK's provider, plus: the expiry kept across processes, a refresh when the server
    rejects a token, configured clients and metadata, and the https/origin checks."""

    def __init__(
        self,
        config: ServerConfig,
        storage: SecretTokenStorage,
        interaction: Interaction | None,
        *,
        client_secret: str | None = None,
        configured_metadata: OAuthMetadata | None = None,
    ) -> None:
        settings = config.oauth or OAuthSettings()
        redirect = interaction.redirect_uri if interaction else PLACEHOLDER_REDIRECT
        metadata = OAuthClientMetadata(
            redirect_uris=[redirect],  # type: ignore[list-item]
            client_name=settings.client_name or CLIENT_NAME,
            scope=settings.scope,
            token_endpoint_auth_method="none",
        )
        super().__init__(
            config.url,
            metadata,
            storage,
            redirect_handler=self._show if interaction else None,
            callback_handler=interaction.wait if interaction else None,
        )
        self.config = config
        self.settings = settings
        self.storage = storage
        self.interaction = interaction
        self.client_secret = client_secret
        self.configured_metadata = configured_metadata

    # -- state across processes ----------------------------------------------------------

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = await self.storage.expires_at()
        found = await self.storage.discovered()  # where the tokens came from: refresh goes there
        if found is not None and self.context.oauth_metadata is None:
            self.context.oauth_metadata, self.context.protected_resource_metadata = found
            if found[1] is not None:
                self.context.auth_server_url = str(found[0].issuer)
        if self.settings.client_id:  # a registered client: from mcp.json, never stored
            self.context.client_info = OAuthClientInformationFull(
                client_id=self.settings.client_id,
                client_secret=self.client_secret,
                redirect_uris=self.context.client_metadata.redirect_uris,
                token_endpoint_auth_method="client_secret_post" if self.client_secret else "none",
            )
            self._pick_secret_method()

    def _pick_secret_method(self) -> None:
        """A registered client's secret goes in the form (``client_secret_post``) unless the
        authorization server lists only HTTP Basic (``client_secret_basic``)."""
        client, found = self.context.client_info, self.context.oauth_metadata
        if client is None or not self.settings.client_id or not self.client_secret:
            return
        methods = (found.token_endpoint_auth_methods_supported if found else None) or []
        if "client_secret_basic" in methods and "client_secret_post" not in methods:
            client.token_endpoint_auth_method = "client_secret_basic"

    # -- the flow ------------------------------------------------------------------------

    def _expected_issuer(self) -> str:
        if self.configured_metadata is not None:
            return str(self.configured_metadata.issuer)
        return super()._expected_issuer()

    def _select_authorization_server(self, advertised: list[str]) -> str:
        if self.configured_metadata is not None:
            return str(self.configured_metadata.issuer)
        return super()._select_authorization_server(advertised)

    def _allowed(self, url: str) -> bool:
        """Discovery, registration and token requests go over HTTPS, to a loopback address,
        or to the server's own origin as the person configured it."""
        return secure_or_loopback(url) or _origin(url) == _origin(self.config.url)

    def _metadata_answer(self, outgoing: httpx2.Request) -> httpx2.Response | None:
        """``authServerMetadataUrl``: its document answers authorization server discovery."""
        if self.configured_metadata is None or outgoing.method != "GET":
            return None
        discovery = build_oauth_authorization_server_metadata_discovery_urls(
            self.context.auth_server_url, self.context.server_url
        )
        if str(outgoing.url) not in discovery:
            return None
        body = self.configured_metadata.model_dump_json(exclude_none=True).encode()
        return httpx2.Response(
            200, content=body, headers={"content-type": "application/json"}, request=outgoing
        )

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        refreshed = False
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request and not self._allowed(str(outgoing.url)):
                    raise UnsafeAuthorizationServer(
                        f"MCP server {self.config.name!r}: its OAuth metadata sends Vis to "
                        f"{outgoing.url.copy_with(query=None)}, which is neither HTTPS nor a "
                        "loopback address; Vis does not sign in there"
                    )
                answer = self._metadata_answer(outgoing)
                response = answer if answer is not None else (yield outgoing)
                if outgoing is request and self._rejected(response):
                    if response.status_code == 401 and not refreshed and self._can_refresh():
                        refreshed = True
                        refresh = await self._refresh_token()
                        if await self._handle_refresh_response((yield refresh)):
                            self._add_auth_header(request)
                            response = yield request
                            if not self._rejected(response):
                                return
                    if self.interaction is None:
                        if response.status_code == 403:
                            raise SignInRequired(
                                self.config.name, "the server asks for more access (scope)"
                            )
                        raise SignInRequired(self.config.name)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    @staticmethod
    def _rejected(response: httpx2.Response) -> bool:
        return response.status_code == 401 or (
            response.status_code == 403
            and extract_field_from_www_auth(response, "error") == "insufficient_scope"
        )

    def _can_refresh(self) -> bool:
        return self.context.can_refresh_token()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        await self.storage.set_discovered(
            self.context.oauth_metadata, self.context.protected_resource_metadata
        )

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        if not self.context.client_metadata.scope and self.settings.scope:
            self.context.client_metadata.scope = self.settings.scope  # nothing advertised
        self._pick_secret_method()  # the authorization server's metadata is known by now
        return await super()._perform_authorization_code_grant()

    async def _show(self, url: str) -> None:
        """Check the authorization page before a person is sent there, then show it."""
        if not secure_or_loopback(url):
            raise UnsafeAuthorizationServer(
                f"MCP server {self.config.name!r}: the sign-in page {_short(url)} is neither "
                "HTTPS nor on a loopback address; Vis does not open it"
            )
        issuer = self._expected_issuer()
        if self.configured_metadata is None and _origin(url) != _origin(issuer):
            raise UnsafeAuthorizationServer(
                f"MCP server {self.config.name!r}: its authorization server {issuer} sends the "
                f"sign-in to another site, {_short(url)}; Vis does not open it. If you trust "
                'that page, set "oauth": {"authServerMetadataUrl": …} for this server in '
                "mcp.json"
            )
        assert self.interaction is not None
        await self.interaction.show(url)


def _short(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def client_secret(
    config: ServerConfig, environ: Mapping[str, str] | None, cwd: Path | None
) -> str | None:
    """``clientSecret`` with its ``${VAR}`` or ``!command`` expanded (redacted from then on)."""
    from vis_core.system.redaction import remember_secrets

    raw = config.oauth.client_secret if config.oauth else None
    if raw is None:
        return None
    value = expand(raw, f"oauth.clientSecret of {config.name!r}", environ, cwd)
    remember_secrets([value])
    return value


async def configured_metadata(config: ServerConfig) -> OAuthMetadata | None:
    """The document ``authServerMetadataUrl`` names (trusted as configured)."""
    url = config.oauth.auth_server_metadata_url if config.oauth else None
    if url is None:
        return None
    try:
        async with httpx2.AsyncClient(timeout=30.0, verify=verified_context()) as client:
            response = await client.get(url, headers={"Accept": "application/json"})
    except httpx2.HTTPError as exc:
        raise OAuthFlowError(f"cannot read authServerMetadataUrl {url}: {exc}") from None
    if response.status_code != 200:
        raise OAuthFlowError(
            f"authServerMetadataUrl {url} answered HTTP {response.status_code}; check the URL"
        )
    try:
        return OAuthMetadata.model_validate_json(response.content)
    except ValueError as exc:
        raise OAuthFlowError(
            f"authServerMetadataUrl {url} is not authorization server metadata: {exc}"
        ) from None


async def make_provider(
    config: ServerConfig,
    secrets_file: Path,
    interaction: Interaction | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> VisOAuthProvider:
    """The provider for one connection (``interaction``: a sign-in the person asked for)."""
    store = CredentialStore(secrets_file, config.name, config.url)
    storage = SecretTokenStorage(store, ignore_tokens=interaction is not None)
    secret = await asyncio.to_thread(client_secret, config, environ, cwd)
    return VisOAuthProvider(
        config,
        storage,
        interaction,
        client_secret=secret,
        configured_metadata=await configured_metadata(config) if interaction else None,
    )
