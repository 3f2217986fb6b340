"""The jail's network: only through Vis's proxy, each request decided by network filters or
the ``network_allowed_hosts`` setting; tried against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import script, vis

from .hostile import BWRAP_PROBLEM

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = 404 if self.path.startswith("/missing") else 200
        body = f"served {self.path} token={self.headers.get('X-Token')}".encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    """A real HTTP server on the host's 127.0.0.1; its port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


POLICY = """
import vis_core.extension as vis

def on_request(request):
    if request.host != "127.0.0.1":
        return None
    if request.path.startswith("/secret"):
        return vis.block("secrets stay on this machine")
    if request.path.startswith("/token"):
        return vis.rewrite_headers(set={"X-Token": "from-the-filter"})
    if request.path.startswith("/boom"):
        raise RuntimeError("filter bug")
    return True

def on_response(response):
    return vis.block("no error pages") if response.status == 404 else None

vis.register_extension(vis.Extension(
    name="netpolicy",
    description="What the jail may reach",
    network_filters=[vis.NetworkFilter("local", on_request, response=on_response)],
))
"""

FETCH = """
import os, socket, urllib.request
def fetch(url, **kw):
    try:
        return urllib.request.urlopen(url, timeout=20, **kw).read().decode()
    except Exception as exc:
        return f"refused: {exc}"
"""


NOTICES: list[str] = []


def _stdout(done: object) -> list[str]:
    """What the run's blocks printed, one string per block (its notifications: NOTICES)."""
    out = []
    NOTICES.clear()
    for line in done.stdout.splitlines():  # type: ignore[attr-defined]
        event = json.loads(line)
        if event.get("type") == "BlockFinished":
            out.append(event["stdout"] + (event.get("error") or ""))
        elif event.get("type") == "Notification":
            NOTICES.append(event["text"])
    return out


def _run(vis_home: Path, workspace: Path, *blocks: str) -> list[str]:
    steps = [{"code": textwrap.dedent(FETCH) + textwrap.dedent(b)} for b in blocks]
    path = script(vis_home, [*steps, {"text": "done"}])
    done = vis(
        "run", "--json", "--provider", "scripted", "--script", str(path), "go",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return _stdout(done)


def test_filters_allow_block_and_rewrite_requests_of_blocks_and_shells(
    vis_home: Path, workspace: Path, server: int
) -> None:
    (vis_home / "extensions").mkdir(parents=True)
    (vis_home / "extensions" / "netpolicy.py").write_text(POLICY)
    base = f"http://127.0.0.1:{server}"
    python = str(Path(sys.executable).resolve())
    fetch_sh = f"import urllib.request as u; print(u.urlopen('{base}/sh').read().decode())"
    shell_fetch = f'{python} -I -c "{fetch_sh}"'
    printed = _run(
        vis_home,
        workspace,
        f"""
        print(fetch("{base}/open"))
        print(fetch("{base}/token"))
        print(fetch("{base}/secret"))
        print(fetch("{base}/missing"))
        print(fetch("{base}/boom"))
        print(fetch("http://example.com/"))
        print((await (await shell({shell_fetch!r})).wait(60)))
        """,
        f"""
        urllib.request.urlopen("{base}/secret")  # uncaught: the block fails with the reason
        """,
    )
    out = printed[0]
    assert "served /open token=None" in out
    assert "served /token token=from-the-filter" in out
    assert (
        "refused: HTTP Error 403: Blocked by Vis: secrets stay on this machine "
        "(network filter 'local' of extension 'netpolicy')"
    ) in out
    assert "refused: HTTP Error 403: Blocked by Vis: no error pages" in out
    assert "network filter 'local' of extension 'netpolicy' failed" in out
    assert "filter bug" in out
    assert "no network filter allows example.com:80" in out
    assert "served /sh token=None" in out  # a jailed shell command goes through it too
    assert "Blocked by Vis: secrets stay on this machine" in printed[1]
    told = [n for n in NOTICES if "secrets stay on this machine" in n]
    assert told == [  # the person sees it too, once for the same request and reason
        f"Network request refused: {base}/secret: secrets stay on this machine (network "
        "filter 'local' of extension 'netpolicy')"
    ]


def test_without_the_proxy_nothing_reaches_out(
    vis_home: Path, workspace: Path, server: int
) -> None:
    """The model unsets the proxy variables, talks to the host's port itself, resolves names,
    tries IPv6, or asks the proxy's socket directly for what is not allowed: none gets out."""
    (vis_home / "config.toml").write_text(f'network_allowed_hosts = "127.0.0.1:{server}"\n')
    base = f"http://127.0.0.1:{server}"
    printed = _run(
        vis_home,
        workspace,
        f"""
        print("allowed:", fetch("{base}/listed"))
        for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
            del os.environ[name]
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
        try:
            print("no proxy:", direct.open("{base}/direct", timeout=5).read().decode())
        except OSError as exc:
            print("no proxy: refused", exc)
        def attempt(what, family, address):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(5)
            try:
                s.connect(address)
                print(what, "ESCAPED")
            except OSError as exc:
                print(what, "failed", exc.errno)
        attempt("tcp", socket.AF_INET, ("127.0.0.1", {server}))
        attempt("ipv6", socket.AF_INET6, ("::1", {server}))
        attempt("outside", socket.AF_INET, ("1.1.1.1", 80))
        try:
            socket.getaddrinfo("example.com", 80)
            print("dns ESCAPED")
        except OSError:
            print("dns failed")
        try:
            socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            print("raw ESCAPED")
        except OSError:
            print("raw failed")
        s = socket.socket(socket.AF_UNIX)
        s.connect(os.environ["VIS_NETWORK_SOCKET"])
        s.sendall(b"CONNECT 127.0.0.1:22 HTTP/1.1\\r\\n\\r\\n")
        print("socket:", s.recv(300).decode().splitlines()[0])
        """,
    )
    out = printed[0]
    assert "allowed: served /listed" in out
    assert "no proxy: refused" in out and "served /direct" not in out
    assert "ESCAPED" not in out
    for what in ("tcp failed", "ipv6 failed", "outside failed", "dns failed", "raw failed"):
        assert what in out
    assert (
        "socket: HTTP/1.1 403 Blocked by Vis: no network filter allows 127.0.0.1:22 and the "
        "network_allowed_hosts setting does not list it"
    ) in out
