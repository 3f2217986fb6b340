"""A test MCP server with the quirks real ones have; run over stdio or streamable HTTP.

``python server_app.py stdio`` or ``python server_app.py http FD`` (a listening socket).
Behaviour switches come from the environment: ``MODE=hang`` never answers initialize and
ignores stdin closing and SIGTERM, ``MODE=mute`` never answers initialize and ends when its
stdin closes (as a well-behaved server does), ``MODE=die`` lets the ``die`` tool end the
process mid-call. ``EXTRA_TOOL=NAME`` serves one more tool, named ``NAME``, that answers with
its name. ``ASK_CLIENT=1`` serves ``ask_client``, which asks the client what Vis does not offer.
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

if os.environ.get("MODE") == "mute":  # before the SDK imports: starts fast under load
    sys.stdin.buffer.read()
    sys.exit(0)
if os.environ.get("MODE") == "hang":
    Path(os.environ["PIDFILE"]).write_text(str(os.getpid()))
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL ends it
    while True:
        time.sleep(60)  # never answers initialize, ignores stdin closing

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

PAGE = 2  # resources per page of resources/list


class PagingServer(MCPServer):
    """Lists resources a page at a time (``nextCursor``), as large real servers do."""

    async def _handle_list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        everything = await self.list_resources()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        more = str(end) if end < len(everything) else None
        return types.ListResourcesResult(resources=everything[start:end], next_cursor=more)


server = PagingServer(
    "fixture",
    instructions="Test fixtures for Vis.\nSecond line of instructions.",
)


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool(annotations=types.ToolAnnotations(readOnlyHint=True))
def weather(city: str, unit: str = "c") -> Weather:
    """Current weather of a city (structured output)."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def big(size: int) -> str:
    """Return `size` characters of text."""
    return "".join(chr(ord("a") + i % 26) for i in range(size))


@server.tool()
def picture() -> Image:
    """A one-pixel PNG."""
    return Image(data=PNG, format="png")


@server.tool(annotations=types.ToolAnnotations(destructiveHint=True))
def fail(reason: str = "broken") -> str:
    """Always fails."""
    raise ValueError(f"it failed: {reason}")


@server.tool()
async def slow(steps: int, ctx: Context, pause: float = 0.3) -> str:
    """Report progress `steps` times, `pause` seconds apart."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        await ctx.info(f"slow step {step + 1}")
        await asyncio.sleep(pause)
    return f"done after {steps} steps"


@server.tool()
async def die() -> str:
    """End the server process in the middle of the call."""
    os._exit(3)


@server.tool(name="do.thing")
def do_dot_thing() -> str:
    """A tool whose name holds a dot."""
    return "dot"


@server.tool(name="do-thing")
def do_dash_thing() -> str:
    """A tool whose name holds a dash."""
    return "dash"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named `extra` (remove it when present) and announce the changed list."""

    def extra() -> str:
        """Added at run time."""
        return "extra!"

    if "extra" in [tool.name for tool in await server.list_tools()]:
        server.remove_tool("extra")
        result = "shrunk"
    else:
        server.add_tool(extra)
        result = "grown"
    await ctx.session.send_tool_list_changed()
    return result


def _extra_tool() -> str:
    """Answers with its own name."""
    return os.environ["EXTRA_TOOL"]


if os.environ.get("EXTRA_TOOL"):
    server.add_tool(_extra_tool, name=os.environ["EXTRA_TOOL"])


class _Answer(BaseModel):
    ok: bool


async def _ask_client(ctx: Context) -> str:
    """Send a notification no client knows, then ask the client for sampling, its roots and
    an answer of the person (elicitation): what each request got, one a line."""
    session = ctx.request_context.session
    await session._connection.outbound.notify("notifications/fixture/unheard", {"x": 1})
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="?"))
    asks = {
        "sampling": lambda: session.create_message([message], max_tokens=5),
        "roots": session.list_roots,
        "elicitation": lambda: ctx.elicit("Go on?", _Answer),
    }
    lines = []
    for name, ask in asks.items():
        try:
            lines.append(f"{name}: {await ask()}")
        except Exception as exc:
            lines.append(f"{name}: {exc}")
    return "\n".join(lines)


if os.environ.get("ASK_CLIENT"):  # a server asking what Vis does not offer
    server.add_tool(_ask_client, name="ask_client")


@server.resource("file:///notes.txt", mime_type="text/plain", description="Some notes")
def notes() -> str:
    return "remember the milk"


@server.resource("file:///pixel.png", mime_type="image/png")
def pixel() -> bytes:
    return PNG


@server.resource("file:///blob.bin", mime_type="application/octet-stream")
def blob() -> bytes:
    return bytes(range(256))


@server.resource("ui://widget", mime_type="text/html;profile=mcp-app")
def widget() -> str:
    return "<p>app</p>"


@server.resource("greeting://{name}", description="A greeting for a name")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


def quirks(app: Any) -> Any:
    """``/auth/mcp`` answers 401 without ``Bearer sesame``; ``/flaky/mcp`` fails every other
    ``resources/list`` with 503 (a retry gets through) and every call of ``echo`` whose text
    says ``fragile`` (``GET /flaky/fragile`` counts those) and every read of a ``busy://``
    resource (``GET /flaky/busy`` counts those); both then serve ``/mcp``. ``/starting/KEY/mcp``
    answers 503 to the first two ``initialize`` requests (a server still starting), and
    ``/broken/KEY/mcp`` 500 to every one; ``GET /starting/KEY`` and ``GET /broken/KEY`` count
    them."""
    failures = {"count": 0, "fragile": 0, "busy": 0}
    initializes: dict[str, int] = {}

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        path = scope["path"]
        if path.startswith(("/starting/", "/broken/")):
            key = path.removesuffix("/mcp")
            if scope["method"] == "GET" and key == path:
                count = b"%d" % initializes.get(key, 0)
                await send({"type": "http.response.start", "status": 200, "headers": []})
                return await send({"type": "http.response.body", "body": count})
            body = await _body(receive)
            if b'"initialize"' in body:
                initializes[key] = initializes.get(key, 0) + 1
                if path.startswith("/broken/") or initializes[key] <= 2:
                    status = 500 if path.startswith("/broken/") else 503
                    await send({"type": "http.response.start", "status": status, "headers": []})
                    return await send({"type": "http.response.body", "body": b"not now"})
            scope = dict(scope, path="/mcp", raw_path=b"/mcp")
            return await app(scope, _replay(body, receive), send)
        if path.startswith(("/auth/", "/flaky/")):
            scope = dict(scope, path="/mcp", raw_path=b"/mcp")
        headers = dict(scope.get("headers") or [])
        if path in ("/flaky/fragile", "/flaky/busy") and scope["method"] == "GET":
            count = failures[path.rsplit("/", 1)[1]]
            await send({"type": "http.response.start", "status": 200, "headers": []})
            return await send({"type": "http.response.body", "body": b"%d" % count})
        if path.startswith("/auth/") and headers.get(b"authorization") != b"Bearer sesame":
            await send({"type": "http.response.start", "status": 401, "headers": []})
            return await send({"type": "http.response.body", "body": b"sign in first"})
        if path.startswith("/flaky/") and scope["method"] == "POST":
            body = await _body(receive)
            if b'"tools/call"' in body and b"fragile" in body:
                failures["fragile"] += 1
                await send({"type": "http.response.start", "status": 503, "headers": []})
                return await send({"type": "http.response.body", "body": b"busy"})
            if b'"resources/read"' in body and b"busy://" in body:
                failures["busy"] += 1
                await send({"type": "http.response.start", "status": 503, "headers": []})
                return await send({"type": "http.response.body", "body": b"busy"})
            if b'"resources/list"' in body:
                failures["count"] += 1
                if failures["count"] % 2 == 1:
                    await send({"type": "http.response.start", "status": 503, "headers": []})
                    return await send({"type": "http.response.body", "body": b"busy"})
            return await app(scope, _replay(body, receive), send)
        return await app(scope, receive, send)

    return wrapped


async def _body(receive: Any) -> bytes:
    """A request's whole body."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def _replay(body: bytes, receive: Any) -> Any:
    """``receive`` for an app, giving it the ``body`` read already first."""
    sent = {"done": False}

    async def replay() -> Any:
        if not sent["done"]:
            sent["done"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def main(argv: list[str]) -> None:
    print(f"fixture server starting in {os.getcwd()}", file=sys.stderr, flush=True)
    if os.environ.get("PIDFILE"):  # tests that end it from outside read its pid here
        Path(os.environ["PIDFILE"]).write_text(str(os.getpid()))
    time.sleep(float(os.environ.get("DELAY", "0")))  # a server slow to start
    if argv[1:2] == ["http"]:
        import socket
        import threading

        import uvicorn

        parent = os.getppid()

        def orphaned() -> None:  # the test worker that started it is gone: so is the server
            while os.getppid() == parent:
                time.sleep(1)
            os._exit(0)

        threading.Thread(target=orphaned, daemon=True).start()

        app = quirks(server.streamable_http_app())
        listening = socket.socket(fileno=int(argv[2]))
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])
        return
    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv)
