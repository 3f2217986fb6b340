"""``vis --web``: the app in a real browser, its guards against other sites, and its shutdown."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from cli_support import script
from PIL import Image
from processes import alive
from textual_serve.download_manager import DownloadManager

from vis_core.cli import main
from vis_core.model.exit_status import EXIT_USAGE
from vis_core.store import Store
from vis_tui.web import AppProcess

from .browser import CHROMIUM, Browser

pytestmark = pytest.mark.xdist_group("web")  # one browser at a time on a 2-core machine

REQUEST = "what does the readme say?"
ANSWER = "The README says hello."


class WebServer:
    """``vis --web`` as a person starts it: its own process, the URL read from its one line."""

    def __init__(self, workspace: Path, vis_home: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["VIS_HOME"] = str(vis_home)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "vis_core.cli", "--web", "-C", str(workspace), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.line = self.process.stdout.readline()
        found = re.search(r"http://(\S+?)/(\S+)/ ", self.line)
        assert found, f"no URL in {self.line!r}; stderr: {self.stop()[1]}"
        self.origin, self.token = found.groups()
        self.url = f"http://{self.origin}/{self.token}/"

    def stop(self) -> tuple[str, str]:
        """Ctrl+C, then what it printed after its first line."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=30)
        return out, err


@pytest.fixture
def readme(workspace: Path) -> Path:
    (workspace / "README.md").write_text("hello\n")
    return workspace


def descendants(pid: int) -> dict[int, str]:
    """Every live process below ``pid``, with its start time (so a reused pid is not it)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
        starts[int(name)] = fields[19]
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = starts[child]
            todo.append(child)
    return found


def still_running(processes: dict[int, str]) -> list[int]:
    left = []
    for pid, start in processes.items():
        try:
            with open(f"/proc/{pid}/stat") as file:
                same = file.read().rsplit(")", 1)[1].split()[19] == start
        except OSError:
            continue
        if same and alive(pid):
            left.append(pid)
    return left


def pixel_variety(png: bytes) -> tuple[int, float]:
    """Distinct colours in the picture, and the share of pixels not of its commonest colour."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24) or []
    commonest = max(count for count, _ in colours)
    return len(colours), 1 - commonest / (image.width * image.height)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.skip("no Chromium installed (apt-get install chromium): the browser test needs it")
    driver = Browser(tmp_path / "chromium-profile")
    yield driver
    asyncio.run(driver.close())


def test_a_turn_in_the_browser_answers_opens_an_activity_and_ends_with_ctrl_c(
    browser: Browser, readme: Path, vis_home: Path, jail_off: None, tmp_path: Path
) -> None:
    responses = [
        {"text": "Let me look.", "code": 'r = await shell("echo opened-activity-$((6*7))")'},
        {"text": ANSWER},
    ]
    path = script(tmp_path, responses)
    server = WebServer(readme, vis_home, "--provider", "scripted", "--script", str(path))
    shot = tmp_path / "vis-web.png"

    async def drive() -> None:
        await browser.start()
        await browser.call(
            "Emulation.setDeviceMetricsOverride",
            width=1000,
            height=600,
            deviceScaleFactor=1,
            mobile=False,
        )
        await browser.call("Page.navigate", url=server.url)
        await browser.wait_for_text("ready")
        await browser.type(REQUEST)
        await browser.key("Enter", 13, "\r")
        await browser.wait_for_text(ANSWER)
        await browser.wait_for_text("1 mutation")  # the turn's footer: the turn has settled
        assert "opened-activity-42" not in await browser.screen_text()  # shown once opened
        # Tab from the prompt to the newest Activity, Enter opens it. The app may still hand
        # the focus back to the prompt as the turn settles (seen under load): then again.
        for attempt in range(3):
            await browser.key("Tab", 9, "\t")
            await browser.wait_for_text("▸ ✓ Run command")
            await browser.key("Enter", 13, "\r")
            try:
                await browser.wait_for_text("opened-activity-42", timeout=5)
                break
            except AssertionError:
                if attempt == 2:
                    raise
        shot.write_bytes(await browser.screenshot())

    try:
        asyncio.run(drive())
        # the session is in the store the terminal app reads, while the tab still runs
        store = Store(vis_home / "vis.db")
        try:
            sessions = store.list_sessions(workspace=readme)
        finally:
            store.close()
        assert [s.title for s in sessions] == [REQUEST]
        started = descendants(server.process.pid)
        assert started, "the tab's app runs in a process of its own"
    finally:
        out, err = server.stop()
    assert server.process.returncode == 0, err
    assert still_running(started) == []  # no app process, nor anything it started, outlives it
    assert server.token not in out + err
    colours, other = pixel_variety(shot.read_bytes())
    assert colours > 8 and other > 0.01, "the screenshot is blank"


async def fetch(
    url: str, *, host: str | None = None, origin: str | None = None
) -> tuple[int, dict[str, str], str]:
    headers = {k: v for k, v in (("Host", host), ("Origin", origin)) if v is not None}
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as reply:
        return reply.status, dict(reply.headers), await reply.text()


async def socket_status(url: str, origin: str | None) -> int:
    async with aiohttp.ClientSession() as http:
        try:
            async with http.ws_connect(url, origin=origin) as socket:
                await socket.close()
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_without_the_token_from_another_host_or_origin_nothing_is_served(
    workspace: Path, vis_home: Path
) -> None:
    server = WebServer(workspace, vis_home)
    base = f"http://{server.origin}"

    async def probe() -> None:
        assert server.origin.startswith("127.0.0.1:")
        status, headers, page = await fetch(server.url)
        assert status == 200
        assert headers["Referrer-Policy"] == "no-referrer"  # the token is in the path
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        assert "https://" not in page and "//fonts" not in page  # nothing from elsewhere
        assert (await fetch(base + "/"))[0] == 403
        wrong = server.token[:-1] + ("y" if server.token.endswith("x") else "x")  # 1 in 64
        assert (await fetch(f"{base}/{wrong}/"))[0] == 403
        assert (await fetch(f"{base}/static/js/textual.js"))[0] in (403, 404)
        assert (await fetch(f"{server.url}static/js/textual.js"))[0] == 200
        assert (await fetch(f"{server.url}static/../web.py"))[0] in (403, 404)
        # DNS rebinding: a page of evil.example resolved to 127.0.0.1 names its own Host
        port = server.origin.split(":")[1]
        assert (await fetch(server.url, host=f"evil.example:{port}"))[0] == 421
        assert (await fetch(server.url, host=f"localhost:{port}"))[0] == 200
        assert (await fetch(server.url, origin="http://evil.example"))[0] == 403
        ws = f"ws://{server.origin}/{server.token}/ws"
        assert await socket_status(ws, "http://evil.example") == 403
        assert await socket_status(ws, None) == 403
        assert await socket_status(f"ws://{server.origin}/wrong/ws", base) == 403

    try:
        asyncio.run(probe())
    finally:
        out, err = server.stop()
    assert server.process.returncode == 0, err
    assert server.token not in out + err  # only its one line shows the token


def test_listening_beyond_this_machine_warns(workspace: Path, vis_home: Path) -> None:
    server = WebServer(workspace, vis_home, "--host", "0.0.0.0")
    out, err = server.stop()
    assert "warning: listening on 0.0.0.0, not only this machine" in err
    assert server.process.returncode == 0


def test_web_with_resume_says_where_to_resume(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--web", "--continue"]) == EXIT_USAGE
    assert "open an earlier one there with /sessions" in capsys.readouterr().err


async def test_only_web_and_mail_links_reach_the_browser() -> None:
    sent: list[str] = []

    async def write_str(text: str) -> None:
        sent.append(text)

    async def nothing(*_: object) -> None:
        return None

    app = AppProcess(
        ("true",),
        write_bytes=nothing,
        write_str=write_str,
        close=nothing,
        download_manager=DownloadManager(),
    )
    for url in (
        "javascript://%0aalert(1)",
        "JavaScript:alert(1)",
        "data:text/html,x",
        "https://x.example/",
    ):
        meta = {"type": "open_url", "url": url, "new_tab": True}
        await app.on_meta(json.dumps(meta).encode())
    assert [json.loads(text)[1]["url"] for text in sent] == ["https://x.example/"]


def test_a_killed_server_leaves_no_app_behind(workspace: Path, vis_home: Path) -> None:
    server = WebServer(workspace, vis_home)

    async def open_tab() -> dict[int, str]:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(
                f"ws://{server.origin}/{server.token}/ws", origin=f"http://{server.origin}"
            ) as socket,
        ):
            await socket.receive_bytes(timeout=30)  # the app drew its first frame
            started = descendants(server.process.pid)
            server.process.kill()
            server.process.wait()
            return started

    started = asyncio.run(open_tab())
    assert started
    deadline = time.monotonic() + 30  # the app ends its own children on the way out
    for pid in still_running(started):
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        with os.fdopen(handle) as end:  # readable once the process has ended
            select.select([end], [], [], max(0.0, deadline - time.monotonic()))
    assert still_running(started) == []


def test_a_page_a_link_opens_cannot_reach_back_into_the_vis_tab(
    browser: Browser, workspace: Path, vis_home: Path
) -> None:
    """A link in the app (a model's answer) opens as textual-serve does, window.open(url,
    '_blank'), which gives the new page a handle on the Vis tab (window.opener): it could
    navigate that tab to a look-alike asking for keys. The page now cuts that tie
    (Cross-Origin-Opener-Policy: same-origin); the opener sees the other site's tab as closed."""
    server = WebServer(workspace, vis_home)
    port = server.origin.split(":")[1]
    elsewhere = f"http://localhost:{port}/{server.token}/"  # another origin (another site)

    async def drive() -> None:
        await browser.start()
        await browser.call("Page.navigate", url=server.url)
        await browser.wait_for_text("Vis")
        opened = await browser.call(  # as a click does: a popup blocker lets it through
            "Runtime.evaluate",
            expression=f"window.other = window.open({elsewhere!r}, '_blank'); !!window.other",
            userGesture=True,
            returnByValue=True,
        )
        assert opened["result"]["value"] is True
        deadline = asyncio.get_running_loop().time() + 30
        while not await browser.evaluate("window.other.closed"):
            assert asyncio.get_running_loop().time() < deadline, "the new tab keeps its opener"
            await asyncio.sleep(0.1)

    try:
        asyncio.run(drive())
    finally:
        server.stop()
