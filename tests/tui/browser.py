"""A small headless-Chromium driver over the DevTools protocol, for the ``vis --web`` tests."""

from __future__ import annotations

import asyncio
import base64
import itertools
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
]
# What the page's websocket receives, kept for the test to read (xterm.js draws on a canvas).
RECORD_SOCKET = """
(() => {
  const Native = window.WebSocket;
  window.__received = [];
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") window.__received.push(new Uint8Array(event.data));
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  window.__screenText = () => {
    const decoder = new TextDecoder();
    return window.__received.map((bytes) => decoder.decode(bytes)).join("");
  };
})();
"""
ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class Browser:
    """One headless Chromium and one page, driven through the DevTools protocol."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM is not None
        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.ids = itertools.count(1)
        self.http: aiohttp.ClientSession | None = None
        self.socket: aiohttp.ClientWebSocketResponse | None = None
        self.session_id = ""

    async def start(self) -> None:
        assert self.process.stderr is not None
        endpoint = None
        for raw in iter(self.process.stderr.readline, b""):
            found = re.search(rb"DevTools listening on (ws://\S+)", raw)
            if found:
                endpoint = found.group(1).decode()
                break
        if endpoint is None:
            raise RuntimeError("chromium exited before it listened for DevTools")
        stderr = self.process.stderr  # drained, so a chatty browser never blocks on the pipe
        threading.Thread(target=stderr.read, daemon=True).start()
        self.http = aiohttp.ClientSession()
        self.socket = await self.http.ws_connect(endpoint, max_msg_size=64 * 1024 * 1024)
        target = await self.call("Target.createTarget", url="about:blank")
        attached = await self.call(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        self.session_id = attached["sessionId"]
        await self.call("Page.enable")
        await self.call("Page.addScriptToEvaluateOnNewDocument", source=RECORD_SOCKET)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events on the way are dropped)."""
        assert self.socket is not None
        number = next(self.ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if self.session_id:
            message["sessionId"] = self.session_id
        await self.socket.send_json(message)
        async for reply in self.socket:
            data = reply.json()
            if data.get("id") == number:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data["result"]
        raise RuntimeError("the DevTools connection closed")

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def screen_text(self) -> str:
        """Everything the app has drawn so far, as text without escape sequences."""
        raw = await self.evaluate("window.__screenText ? window.__screenText() : ''") or ""
        return ESCAPES.sub("", raw)

    async def wait_for_text(self, text: str, timeout: float = 20) -> None:
        """Wait until the app has drawn ``text`` (polled at the page's frame rate)."""
        try:
            async with asyncio.timeout(timeout):
                while text not in await self.screen_text():
                    await self.evaluate("new Promise((done) => requestAnimationFrame(done))")
        except TimeoutError:
            seen = " ".join((await self.screen_text())[-3000:].split())
            raise AssertionError(
                f"{text!r} not drawn in {timeout} s; the end drawn: {seen}"
            ) from None

    async def key(self, key: str, code: int, text: str = "") -> None:
        """Press and release one key."""
        for kind in ("keyDown", "keyUp"):
            await self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=key,
                windowsVirtualKeyCode=code,
                **({"text": text} if text and kind == "keyDown" else {}),
            )

    async def click(self, x: float, y: float) -> None:
        """Click the left button at ``x``, ``y`` (CSS pixels)."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.call(
                "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
            )

    async def type(self, text: str) -> None:
        await self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        await self.call("Input.insertText", text=text)

    async def screenshot(self) -> bytes:
        shot = await self.call("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()
        if self.http is not None:
            await self.http.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
