"""An OAuth-protected MCP server (authorization server + resource server) built with the SDK.

``python oauth_server_app.py FD`` (a listening socket): serves ``/mcp`` (tool ``echo``) behind
bearer tokens it issues itself, with dynamic client registration, and an auto-approving
``/authorize``.
Test controls: ``POST /admin/expire`` ends every access token, ``GET /admin/stats`` counts,
``POST /admin/mode?m=…`` makes its metadata hostile (``plain-http``, ``other-origin``,
``http-register``), names a dead authorization server and hides its own metadata
(``wrong-as``; ``GET /admin/as-metadata`` still serves it), asks every token for more scope
(``step-up``) or is honest again (``honest``);
``POST /admin/client`` registers the client ``my-client`` (secret ``s3cret-value-1``)
for ``?redirect=URI`` (and ``&scope=…``, ``&method=…``); ``basic-only`` lists only
``client_secret_basic`` for the token endpoint.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import threading
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse

LISTENING = socket.socket(fileno=int(sys.argv[1]))
BASE = f"http://127.0.0.1:{LISTENING.getsockname()[1]}"
STATS: dict[str, Any] = {"registrations": 0, "refreshes": 0, "client_names": [], "codes": 0}
MODE = {"value": "honest"}


class Provider:
    """Everything in memory; every authorization request is approved at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        STATS["registrations"] += 1
        STATS["client_names"].append(client_info.client_name)
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        STATS["codes"] += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, authorization_code: str) -> Any:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        ttl = 3600
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + ttl,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=ttl,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(self, client: Any, authorization_code: Any) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: Any, refresh_token: Any, scopes: list[str]
    ) -> OAuthToken:
        STATS["refreshes"] += 1
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def exchange_identity_assertion(self, client: Any, params: Any) -> OAuthToken:
        raise NotImplementedError("identity assertions are not part of this test server")

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


provider = Provider()
server = MCPServer(
    "locked",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,  # type: ignore[arg-type]
        resource_server_url=f"{BASE}/mcp",  # type: ignore[arg-type]
        client_registration_options=ClientRegistrationOptions(enabled=True),
        validate_token_resource=False,
    ),
)


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.custom_route("/admin/expire", methods=["POST"])
async def expire(_request: Request) -> PlainTextResponse:
    provider.access.clear()
    return PlainTextResponse("expired")


@server.custom_route("/admin/stats", methods=["GET"])
async def stats(_request: Request) -> JSONResponse:
    return JSONResponse(STATS)


@server.custom_route("/admin/mode", methods=["POST"])
async def mode(request: Request) -> PlainTextResponse:
    MODE["value"] = request.query_params["m"]
    return PlainTextResponse(MODE["value"])


@server.custom_route("/admin/client", methods=["POST"])
async def client(request: Request) -> PlainTextResponse:
    provider.clients["my-client"] = OAuthClientInformationFull(
        client_id="my-client",
        client_secret="s3cret-value-1",
        redirect_uris=[request.query_params["redirect"]],  # type: ignore[list-item]
        token_endpoint_auth_method=request.query_params.get("method", "client_secret_post"),
        scope=request.query_params.get("scope"),
    )
    return PlainTextResponse("ok")


@server.custom_route("/admin/as-metadata", methods=["GET"])
async def as_metadata(_request: Request) -> JSONResponse:
    """The honest authorization server metadata, for ``authServerMetadataUrl``."""
    return JSONResponse(HONEST)


HONEST = {
    "issuer": BASE,
    "authorization_endpoint": f"{BASE}/authorize",
    "token_endpoint": f"{BASE}/token",
    "registration_endpoint": f"{BASE}/register",
    "response_types_supported": ["code"],
    "code_challenge_methods_supported": ["S256"],
}
HOSTILE = {
    "plain-http": {"authorization_endpoint": "http://sign-in.example/authorize"},
    "other-origin": {"authorization_endpoint": "https://sign-in.example/authorize"},
    "http-register": {"registration_endpoint": "http://sign-in.example/register"},
    "basic-only": {"token_endpoint_auth_methods_supported": ["client_secret_basic"]},
}


def hostile(app: Any) -> Any:
    """Rewrites the authorization server metadata as the current mode says."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if MODE["value"] == "step-up" and path == "/mcp":  # every token lacks the scope "admin"
            challenge = b'Bearer error="insufficient_scope", scope="admin"'
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"www-authenticate", challenge)]})  # fmt: skip
            return await send({"type": "http.response.body", "body": b""})
        if MODE["value"] == "wrong-as" and path.startswith("/.well-known/"):
            if path.startswith("/.well-known/oauth-protected-resource"):  # names a dead server
                data = {"resource": f"{BASE}/mcp", "authorization_servers": ["http://127.0.0.1:9"]}
                return await _json(send, 200, data)
            return await _json(send, 404, {"error": "not found"})
        changes = HOSTILE.get(MODE["value"])
        if (
            scope["type"] != "http"
            or not changes
            or not path.startswith("/.well-known/oauth-authorization-server")
        ):
            return await app(scope, receive, send)
        sent: list[Any] = []

        async def keep(message: Any) -> None:
            sent.append(message)

        await app(scope, receive, keep)
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        await _json(send, 200, {**json.loads(body), **changes})

    return wrapped


async def _json(send: Any, status: int, data: Any) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})  # fmt: skip
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})


def main() -> None:
    import uvicorn

    parent = os.getppid()

    def orphaned() -> None:  # the test worker that started it is gone: so is the server
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()
    config = uvicorn.Config(hostile(server.streamable_http_app()), log_level="warning")
    uvicorn.Server(config).run(sockets=[LISTENING])


if __name__ == "__main__":
    main()
