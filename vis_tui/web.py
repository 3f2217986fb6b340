"""``vis --web``: the Vis app in a browser, one app process per tab, served by textual-serve."""

from __future__ import annotations

import asyncio
import ctypes
import hmac
import html
import json
import os
import secrets
import signal
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager
from textual_serve.server import Server, to_int

from vis_core.model.exit_status import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from vis_tui.links import opens

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
QUIT_GRACE = 5.0  # seconds an app process has to quit before its process group is ended
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent ends

PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>Vis</title>
<link rel="stylesheet" href="static/css/xterm.css">
<script src="static/js/textual.js"></script>
<style>
@font-face { font-family: "Roboto Mono";
  src: url("static/fonts/RobotoMono-VariableFont_wght.ttf"); }
@font-face { font-family: "Roboto Mono"; font-style: italic;
  src: url("static/fonts/RobotoMono-Italic-VariableFont_wght.ttf"); }
html, body { margin: 0; height: 100%; background: #0c181f; color: #eee;
  font-family: "Roboto Mono", monospace; }
.textual-terminal { width: 100vw; height: 100vh; }
.closed-dialog { display: none; position: absolute; inset: 0; align-items: center;
  justify-content: center; }
body.-closed .closed-dialog { display: flex; }
body.-closed .textual-terminal { opacity: 0.3; }
a { color: #ac5af4; }
</style>
</head>
<body>
<div class="closed-dialog"><p>This Vis session ended. <a href="./">Start another</a></p></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="$WS"
 data-font-size="$FONT"></div>
</body>
</html>
"""


@dataclass(frozen=True)
class WebOptions:
    """Where to listen and the command each browser tab runs (the app, without ``--web``)."""

    argv: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int = 0


def _end_with(server: int) -> None:
    """In a tab's app process, before it runs: a SIGTERM when the server dies, however it
    dies (killed, crashed), so no app outlives it (Vis's app ends its children on SIGTERM)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != server:  # it died before the line above
        os._exit(EXIT_FAILED)


class AppProcess(AppService):
    """One tab's app: a process in a session of its own, so it and its children end together."""

    def __init__(self, argv: tuple[str, ...], **kwargs) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv

    async def _open_app_process(self, width: int = 80, height: int = 24):
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,
            preexec_fn=partial(_end_with, os.getpid()),
        )
        self._stdin = process.stdin
        return process

    async def on_meta(self, data: bytes) -> None:
        """As textual-serve, but a link the app opens reaches the browser only when it is a
        web or mail address (a ``javascript:`` one would run in the page, beside the token)."""
        try:
            meta = json.loads(data)
        except ValueError:
            return
        if meta.get("type") == "open_url":
            if not opens(str(meta.get("url", ""))):
                return
        await super().on_meta(data)

    async def close(self) -> None:
        """Ask the app to quit; after :data:`QUIT_GRACE` seconds, end its process group."""
        process = self._process
        try:
            await asyncio.wait_for(self.stop(), QUIT_GRACE)
        except TimeoutError:
            pass
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                await asyncio.wait_for(process.wait(), QUIT_GRACE)
                break
            except TimeoutError:
                continue
        await process.wait()


class WebServer(Server):
    """textual-serve's server, guarded: a secret token in every path, the Host and Origin
    headers checked, no external resources, and every app process ended on shutdown."""

    def __init__(self, options: WebOptions) -> None:
        super().__init__(" ".join(options.argv), host=options.host, port=options.port, title="Vis")
        self.options = options
        self.token = secrets.token_urlsafe(24)
        self.apps: set[AppProcess] = set()
        self.statics = {
            path.relative_to(self.statics_path).as_posix(): path
            for path in self.statics_path.rglob("*")
            if path.is_file()
        }

    # -- guards ------------------------------------------------------------------------------

    def allowed_hosts(self) -> set[str] | None:
        """Host header values accepted (``None``: any, when listening on every address)."""
        if self.options.host in ("0.0.0.0", "::"):
            return None
        names = {self.options.host, "127.0.0.1", "localhost"}
        if self.options.host == "::1":
            names.add("[::1]")
        return {f"{name}:{self.port}" for name in names}

    @web.middleware
    async def guard(self, request: web.Request, handler) -> web.StreamResponse:
        """Refuse a request without the token, for another Host, or from another Origin."""
        allowed = self.allowed_hosts()
        if allowed is not None and request.headers.get("Host", "") not in allowed:
            raise web.HTTPMisdirectedRequest(text="vis --web: unknown Host\n")
        token = request.match_info.get("token", "")
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            raise web.HTTPForbidden(text="vis --web: open the address vis --web printed\n")
        origin = request.headers.get("Origin")
        is_socket = request.headers.get("Upgrade", "").lower() == "websocket"
        if (origin is not None or is_socket) and origin != f"http://{request.host}":
            raise web.HTTPForbidden(text="vis --web: cross-origin request refused\n")
        return await handler(request)

    @staticmethod
    async def secure_headers(request: web.Request, response: web.StreamResponse) -> None:
        """No referrer (the token is in the path), no framing, no opener for a page a link
        opens, nothing from elsewhere."""
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
        # a page a link opens (window.open, '_blank') gets no handle on this tab: it could
        # otherwise send the tab to a look-alike page
        response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-store"
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            f"connect-src 'self' ws://{request.host}; frame-ancestors 'none'; base-uri 'none'; "
            "form-action 'none'"
        )

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard])
        app.add_routes(
            [
                web.get("/{token}/", self.handle_index),
                web.get("/{token}/ws", self.handle_websocket),
                web.get("/{token}/static/{path:.+}", self.handle_static),
            ]
        )
        app.on_response_prepare.append(self.secure_headers)
        return app

    # -- pages -------------------------------------------------------------------------------

    async def handle_index(self, request: web.Request) -> web.Response:  # type: ignore[override]
        font = to_int(request.query.get("fontsize", "16"), 16)
        socket = html.escape(f"ws://{request.host}/{self.token}/ws", quote=True)
        page = PAGE.replace("$WS", socket).replace("$FONT", str(font))
        return web.Response(text=page, content_type="text/html")

    async def handle_static(self, request: web.Request) -> web.StreamResponse:
        path = self.statics.get(request.match_info["path"])
        if path is None:
            raise web.HTTPNotFound()
        return web.FileResponse(path)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser tab: one app process, ended when the tab goes or the server stops."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        await websocket.prepare(request)
        app = AppProcess(
            self.options.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.apps.add(app)
        try:
            await app.start(width, height)
            await self._process_messages(websocket, app)
        except (asyncio.CancelledError, ConnectionResetError):
            pass
        finally:
            await app.close()
            self.apps.discard(app)
            await websocket.close()
        return websocket

    # -- running -----------------------------------------------------------------------------

    async def run(self, *, announce=print) -> None:
        """Serve until SIGINT or SIGTERM; then end every app process and return."""
        self.download_manager = DownloadManager()
        runner = web.AppRunner(
            await self._make_app(), access_log=None, handle_signals=False, shutdown_timeout=1
        )
        await runner.setup()
        site = web.TCPSite(runner, self.options.host, self.options.port)
        await site.start()
        self.port = runner.addresses[0][1]
        shown = f"[{self.options.host}]" if ":" in self.options.host else self.options.host
        if self.options.host in ("0.0.0.0", "::"):
            shown = "127.0.0.1"
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        announce(
            f"Vis is open at http://{shown}:{self.port}/{self.token}/ "
            "(one app per browser tab; Ctrl+C stops them all)"
        )
        try:
            await stop.wait()
        finally:
            await asyncio.gather(*(app.close() for app in list(self.apps)))
            await runner.cleanup()


def serve_web(options: WebOptions) -> int:
    """Run ``vis --web`` until Ctrl+C; the exit status."""
    if options.host not in LOCAL_HOSTS:
        print(
            f"vis --web: warning: listening on {options.host}, not only this machine: "
            "anyone who can reach it and learns the address can use Vis as you",
            file=sys.stderr,
        )
    server = WebServer(options)
    try:
        asyncio.run(server.run(announce=lambda line: print(line, flush=True)))
    except KeyboardInterrupt:  # Ctrl+C before the server listened: nothing was started
        return EXIT_INTERRUPTED
    except OSError as exc:
        print(
            f"vis --web: cannot listen on {options.host}:{options.port}: {exc.strerror or exc}; "
            "choose another port with --port N",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


def app_argv(workspace: Path, forwarded: list[str]) -> tuple[str, ...]:
    """The command one tab runs: this Python, isolated from the working folder, the app."""
    return (sys.executable, "-I", "-m", "vis_core.cli", "-C", str(workspace), *forwarded)
