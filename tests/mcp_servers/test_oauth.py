"""OAuth sign-in against an OAuth-protected MCP server built with the SDK (a real process)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from warm_servers import vis_command

from vis_core.cli import main
from vis_core.mcp.client import ConnectionLost, ServerConnection, State
from vis_core.mcp.config import Source, parse_entry
from vis_core.mcp.logfile import McpLog
from vis_core.mcp.oauth_settings import parse_oauth, redirect_uri

from .conftest import write_config
from .oauth_fixture import free_port as _free_port
from .oauth_fixture import run_oauth_server

NO_BROWSER = {"DISPLAY": "", "WAYLAND_DISPLAY": ""}
# The fixture server speaks plain HTTP: its clients here pass verify=False, since one told to
# verify loads the system's certificates (~25 ms of CPU each time) for nothing.


@pytest.fixture(scope="module")
def oauth_server() -> Iterator[str]:
    with run_oauth_server() as base:
        yield base


@pytest.fixture
def honest(oauth_server: str) -> Iterator[str]:
    httpx2.post(f"{oauth_server}/admin/mode?m=honest", verify=False)
    yield oauth_server
    httpx2.post(f"{oauth_server}/admin/mode?m=honest", verify=False)


def _stats(base: str) -> dict[str, Any]:
    return httpx2.get(f"{base}/admin/stats", verify=False).json()


def _login(workspace: Path, name: str = "locked") -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | NO_BROWSER
    return subprocess.Popen(
        vis_command("mcp", "login", name, env=env),
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _authorization_url(process: subprocess.Popen[str]) -> str:
    """The sign-in page the login printed (read line by line until it appears)."""
    assert process.stdout is not None
    seen = []
    while True:
        line = process.stdout.readline()
        if not line:
            err = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"no sign-in page was printed: {''.join(seen)}{err}")
        seen.append(line)
        found = re.search(r"(http://\S+/authorize\?\S+)", line)
        if found:
            return found.group(1)


def _sign_in_here(entry: dict[str, Any]) -> tuple[str, str]:
    """``sign_in`` in this process; an HTTP client approves the page it shows.
    Returns the page and what sign-in said."""
    from vis_core.mcp.oauth_login import sign_in
    from vis_core.paths import VisPaths

    config = parse_entry("locked", entry, source=Source.USER, origin="mcp.json")
    pages: list[str] = []
    approvals: list[asyncio.Future[Any]] = []

    async def approve(url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=True, verify=False) as client:
            await client.get(url)

    def show(url: str, opened: bool) -> None:
        pages.append(url)
        approvals.append(asyncio.ensure_future(approve(url)))

    said = asyncio.run(sign_in(config, VisPaths.from_env().secrets_file, show=show))
    return pages[0], said


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def _secrets(vis_home: Path) -> dict[str, Any]:
    data = json.loads((vis_home / "secrets").read_text())
    return {k: json.loads(v) for k, v in data.items() if k.startswith("mcp-oauth:")}


def _call(tmp_path: Path, base: str, text: str) -> Any:
    return asyncio.run(_echo(tmp_path, base, text))


async def _echo(tmp_path: Path, base: str, text: str) -> Any:
    config = parse_entry("locked", {"url": f"{base}/mcp"}, source=Source.USER, origin="mcp.json")
    conn = ServerConnection(config, workspace=tmp_path, mcp_log=McpLog(tmp_path / "mcp.log"))
    conn.start()
    try:
        await conn.wait_ready(30)
        if conn.state is not State.CONNECTED:
            return f"{conn.state.value}: {conn.error}"
        result = await conn.call_tool("echo", {"text": text})
        return result.content[0].text
    finally:
        await conn.stop()


def test_login_call_refresh_logout(
    vis_home: Path,
    workspace: Path,
    tmp_path: Path,
    honest: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = honest
    write_config(vis_home / "mcp.json", {"locked": {"url": f"{base}/mcp"}})
    before = _stats(base)
    # not signed in: a call says how to sign in
    error = _call(tmp_path, base, "hi")
    assert "needs sign-in" in error and "run `vis mcp login locked`" in error
    # sign in: the page is printed (no browser here); an HTTP client plays the person
    login = _login(workspace)
    url = _authorization_url(login)
    page = httpx2.get(
        url, follow_redirects=True, verify=False
    )  # approves, then the 127.0.0.1 redirect
    assert page.status_code == 200 and "Vis is signed in" in page.text
    code, out, err = _finish(login)
    assert code == 0, err
    assert "Signed in to MCP server 'locked' (1 tool)." in out
    after = _stats(base)
    assert after["registrations"] == before["registrations"] + 1  # dynamic registration
    assert after["client_names"][-1] == "vis"
    # the tokens are a secret: in the secrets file (0600), never printed
    assert (vis_home / "secrets").stat().st_mode & 0o777 == 0o600
    (entry,) = _secrets(vis_home).values()
    first = entry["tokens"]["access_token"]
    assert first not in out + err and entry["tokens"]["refresh_token"] not in out + err
    # a tool call uses the stored token
    assert _call(tmp_path, base, "hello") == "hello"
    # the server ends the token: the next connection refreshes it, no new sign-in
    httpx2.post(f"{base}/admin/expire", verify=False)
    assert _call(tmp_path, base, "again") == "again"
    assert _stats(base)["refreshes"] == after["refreshes"] + 1
    assert _stats(base)["codes"] == after["codes"]
    (entry,) = _secrets(vis_home).values()
    assert entry["tokens"]["access_token"] != first
    # expired by the clock: refreshed before it is sent
    data = json.loads((vis_home / "secrets").read_text())
    (key,) = [k for k in data if k.startswith("mcp-oauth:")]
    entry["expires_at"] = time.time() - 5
    data[key] = json.dumps(entry)
    (vis_home / "secrets").write_text(json.dumps(data))
    assert _call(tmp_path, base, "later") == "later"
    assert _stats(base)["refreshes"] == after["refreshes"] + 2
    # the server asks for more scope: sign in again
    httpx2.post(f"{base}/admin/mode?m=step-up", verify=False)
    said = _call(tmp_path, base, "more")
    assert said.startswith("needs sign-in: the server asks for more access (scope)")
    assert "run `vis mcp login locked`" in said
    httpx2.post(f"{base}/admin/mode?m=honest", verify=False)
    # sign out: the credentials are gone and the server asks for sign-in again
    assert main(["-C", str(workspace), "mcp", "logout", "locked"]) == 0
    assert "Signed out of MCP server 'locked'" in capsys.readouterr().out
    assert _secrets(vis_home) == {}
    said = _call(tmp_path, base, "gone")
    assert said.startswith("needs sign-in: the server answered 401 Unauthorized; ")
    assert said.endswith(
        'select "Sign in" in /mcp, run `/mcp login locked`, or run `vis mcp login locked`'
    )


def test_a_pasted_redirect_signs_in(vis_home: Path, workspace: Path, honest: str) -> None:
    """The browser on another machine: the person pastes the address it was sent to."""
    write_config(vis_home / "mcp.json", {"locked": {"url": f"{honest}/mcp"}})
    login = _login(workspace)
    url = _authorization_url(login)
    sent_to = httpx2.get(url, verify=False).headers[
        "location"
    ]  # what the other machine's browser shows
    assert sent_to.startswith("http://127.0.0.1:") and "code=" in sent_to
    assert login.stdin is not None
    login.stdin.write("not an address\n" + sent_to + "\n")
    login.stdin.flush()
    code, out, err = _finish(login)
    assert code == 0, err
    assert "paste the whole address" in out and "Signed in to MCP server 'locked'" in out
    # signing in again reuses the registered client, on the port it was registered with
    registrations = _stats(honest)["registrations"]
    second, said = _sign_in_here({"url": f"{honest}/mcp"})
    assert re.search(r"redirect_uri=[^&]+", second).group(0) in url  # type: ignore[union-attr]
    assert said.startswith("Signed in") and _stats(honest)["registrations"] == registrations
    # a new callbackPort: the client registered for the old address is replaced
    port = _free_port()
    page, said = _sign_in_here({"url": f"{honest}/mcp", "oauth": {"callbackPort": port}})
    assert f"127.0.0.1%3A{port}%2Fcallback" in page and said.startswith("Signed in")
    assert _stats(honest)["registrations"] == registrations + 1


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_a_registered_client_from_mcp_json(
    vis_home: Path, honest: str, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = _free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    params = {"redirect": redirect, "scope": "read write", "method": method}
    httpx2.post(f"{honest}/admin/client", params=params, verify=False)
    if method == "client_secret_basic":  # the server takes the secret only as HTTP Basic
        httpx2.post(f"{honest}/admin/mode?m=basic-only", verify=False)
    oauth = {
        "clientId": "my-client",
        "clientSecret": "${EXAMPLE_SECRET}",
        "callbackPort": port,
        "scope": "read write",  # the server advertises none
    }
    registrations = _stats(honest)["registrations"]
    monkeypatch.setenv("EXAMPLE_SECRET", "s3cret-value-1")
    url, said = _sign_in_here({"url": f"{honest}/mcp", "oauth": oauth})
    assert "client_id=my-client" in url and f"127.0.0.1%3A{port}%2Fcallback" in url
    assert "scope=read+write" in url
    assert said.startswith("Signed in to MCP server 'locked'")
    assert _stats(honest)["registrations"] == registrations  # no registration
    assert "s3cret-value-1" not in (vis_home / "secrets").read_text()  # stays in the env


def test_auth_server_metadata_url_replaces_discovery(
    vis_home: Path, workspace: Path, honest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    httpx2.post(
        f"{honest}/admin/mode?m=wrong-as", verify=False
    )  # names a dead server, hides its metadata
    write_config(vis_home / "mcp.json", {"locked": {"url": f"{honest}/mcp"}})
    assert main(["-C", str(workspace), "mcp", "login", "locked"]) == 1
    err = capsys.readouterr().err
    assert "sign-in to MCP server 'locked' failed: ConnectError" in err
    assert '"oauth": {"authServerMetadataUrl": …}' in err
    oauth = {"authServerMetadataUrl": f"{honest}/admin/as-metadata", "clientName": "Claude Code"}
    url, said = _sign_in_here({"url": f"{honest}/mcp", "oauth": oauth})
    assert url.startswith(f"{honest}/authorize?") and said.startswith("Signed in")
    assert _stats(honest)["client_names"][-1] == "Claude Code"  # registered under that name


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("plain-http", "the sign-in page http://sign-in.example/authorize is neither HTTPS nor"),
        ("other-origin", "sends the sign-in to another site, https://sign-in.example/authorize"),
        ("http-register", "sends Vis to http://sign-in.example/register, which is neither"),
    ],
)
def test_hostile_metadata_is_refused(
    vis_home: Path,
    workspace: Path,
    honest: str,
    mode: str,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key, value in NO_BROWSER.items():
        monkeypatch.setenv(key, value)
    httpx2.post(f"{honest}/admin/mode?m={mode}", verify=False)
    write_config(vis_home / "mcp.json", {"locked": {"url": f"{honest}/mcp"}})
    assert main(["-C", str(workspace), "mcp", "login", "locked"]) == 1
    captured = capsys.readouterr()
    assert said in captured.err
    assert "/authorize?" not in captured.out  # no page was shown to the person


def test_oauth_settings_follow_the_rules() -> None:
    settings = parse_oauth({"callbackUrl": "http://localhost/cb", "scope": " read  write "})
    assert settings is not None and settings.scope == "read write"
    assert redirect_uri(settings, 4321) == "http://localhost:4321/cb"  # a port is added
    fixed = parse_oauth({"callbackUrl": "http://[::1]:9000/done"})
    assert redirect_uri(fixed, 4321) == "http://[::1]:9000/done"  # exactly as written
    assert redirect_uri(parse_oauth({"callbackPort": 8765}), 8765) == (
        "http://127.0.0.1:8765/callback"
    )
    for raw, message in [
        ({"callbackUrl": "https://localhost/cb"}, "must use HTTP on localhost"),
        ({"callbackUrl": "http://example.com/cb"}, "must use HTTP on localhost"),
        ({"authServerMetadataUrl": "http://idp.example/.well-known/x"}, "must use HTTPS"),
        ({"callbackPort": 0}, "must be a port number"),
        ({"clientID": "x"}, "unknown fields ['clientID']"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_oauth(raw)
    assert parse_oauth({"authServerMetadataUrl": "http://127.0.0.1:9/x"}) is not None
    with pytest.raises(ValueError, match="'oauth' is for HTTP servers"):
        parse_entry("s", {"command": "x", "oauth": {}}, source=Source.USER, origin="f")


async def test_mcp_login_and_logout_commands_and_a_shell_sign_in_reach_the_session(
    vis_home: Path, workspace: Path, honest: str
) -> None:
    from vis_core.mcp.command import run_mcp_command
    from vis_core.mcp.config import load_config
    from vis_core.mcp.manager import McpManager
    from vis_core.mcp.oauth_session import reconnect_signed_in
    from vis_core.paths import VisPaths

    write_config(vis_home / "mcp.json", {"locked": {"url": f"{honest}/mcp"}})
    paths = VisPaths.from_env()
    config = load_config(paths.mcp_file, None, trusted=False)
    manager = McpManager(config, workspace=workspace, paths=paths)
    manager.start()
    try:
        await manager.wait_all(30)
        conn = manager.get("locked")
        assert conn is not None and conn.state is State.NEEDS_SIGN_IN
        shown: list[str] = []
        approvals: list[asyncio.Task[Any]] = []

        async def approve(url: str) -> None:
            async with httpx2.AsyncClient(follow_redirects=True, verify=False) as client:
                await client.get(url)

        def say(text: str) -> None:  # the person opens the page the command shows
            shown.append(text)
            url = re.search(r"(http://\S+/authorize\?\S+)", text)
            assert url is not None
            approvals.append(asyncio.ensure_future(approve(url.group(1))))

        ok, title, _ = await run_mcp_command(manager, ["login", "locked"], say)
        assert ok and title == "Signed in to MCP server 'locked' (1 tool).", title
        assert "Open this page to sign in to MCP server 'locked'" in shown[0]
        assert conn.state is State.CONNECTED
        ok, title, _ = await run_mcp_command(manager, ["logout", "locked"])
        assert ok and title.startswith("Signed out of MCP server 'locked'")
        assert conn.state is State.NEEDS_SIGN_IN
        # `vis mcp login` in another shell: the session connects before its next turn
        login = _login(workspace)
        url = _authorization_url(login)
        await approve(url)
        code, _out, err = await asyncio.to_thread(_finish, login)
        assert code == 0, err
        await reconnect_signed_in(manager)
        assert conn.state is State.CONNECTED
        assert (await conn.call_tool("echo", {"text": "next turn"})).content[0].text == "next turn"
    finally:
        await manager.close()


def test_login_names_what_is_wrong(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(
        vis_home / "mcp.json",
        {
            "local": {"command": "x"},
            "keyed": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer k"}},
        },
    )
    assert main(["-C", str(workspace), "mcp", "login", "nope"]) == 1
    assert (
        "no MCP server named 'nope' in mcp.json (servers: local, keyed)" in capsys.readouterr().err
    )
    assert main(["-C", str(workspace), "mcp", "login", "local"]) == 1
    assert "'local' is a stdio server; sign-in is for HTTP servers" in capsys.readouterr().err
    assert main(["-C", str(workspace), "mcp", "login", "keyed"]) == 1
    assert "has an Authorization header in mcp.json" in capsys.readouterr().err


def test_a_call_to_a_server_that_needs_sign_in_says_so_plainly(tmp_path: Path, honest: str) -> None:
    async def call() -> str:
        config = parse_entry(
            "locked", {"url": f"{honest}/mcp"}, source=Source.USER, origin="mcp.json"
        )
        conn = ServerConnection(config, workspace=tmp_path, mcp_log=McpLog(tmp_path / "m.log"))
        conn.start()
        try:
            await conn.wait_ready(30)
            with pytest.raises(ConnectionLost) as raised:
                await conn.call_tool("echo", {"text": "hi"})
            return str(raised.value)
        finally:
            await conn.stop()

    said = asyncio.run(call())
    assert said.startswith("MCP server 'locked' needs sign-in: "), said
