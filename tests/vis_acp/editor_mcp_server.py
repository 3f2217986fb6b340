"""An MCP server an editor passes to `vis acp`: ``python editor_mcp_server.py stdio`` or
``... web FD`` (a listening socket: streamable HTTP at ``/mcp``, SSE at ``/sse``; both answer
401 without ``X-Editor-Token: let-me-in``)."""

from __future__ import annotations

import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("editor-tools")
TOKEN = b"let-me-in"


@server.tool()
def token() -> str:
    """The EDITOR_TOKEN and EDITOR_NOTE the server was started with."""
    env = os.environ
    return f"token={env.get('EDITOR_TOKEN', '-')} note={env.get('EDITOR_NOTE', '-')}"


@server.tool()
def keys() -> str:
    """The names of the environment's API keys (none, when Vis fenced it)."""
    return "keys=" + (",".join(sorted(k for k in os.environ if k.endswith("_API_KEY"))) or "-")


def guarded(app: Any) -> Any:
    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-editor-token") != TOKEN:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            return await send({"type": "http.response.body", "body": b"no token"})
        return await app(scope, receive, send)

    return wrapped


def both(streamable: Any, sse: Any) -> Any:
    """One process serves both transports (each server process imports the SDK, ~1.2 s of
    CPU): SSE's paths go to the SSE app, the rest (and the lifespan that runs the streamable
    sessions) to the streamable one."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        to = sse if path.startswith(("/sse", "/messages")) else streamable
        return await to(scope, receive, send)

    return app


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        import socket

        import uvicorn

        listening = socket.socket(fileno=int(sys.argv[2]))
        app = guarded(both(server.streamable_http_app(), server.sse_app()))
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])
