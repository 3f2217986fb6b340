"""The jail's network proxy on its own: what it forwards, what it refuses, and why."""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from vis_core.model.network import HeaderRewrite, NetworkRequest, parse_allowed_hosts
from vis_core.sandbox.network_proxy import NetworkPolicy, NetworkProxy, Verdict
from vis_core.settings.core import check_value

SEEN: list[str] = []


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        SEEN.append(self.path)
        body = f"served {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    SEEN.clear()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


class _Allow(NetworkPolicy):
    def __init__(self, rewrite: HeaderRewrite | None = None) -> None:
        self.rewrite = rewrite
        self.asked: list[NetworkRequest] = []

    async def request(self, request: NetworkRequest) -> Verdict:
        self.asked.append(request)
        return Verdict(True, rewrites=(self.rewrite,) if self.rewrite else ())


@pytest.fixture
async def proxy() -> AsyncIterator[NetworkProxy]:
    async def loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]  # every name resolves to the host's own loopback

    made = NetworkProxy(_Allow(), resolve=loopback)
    await made.start()
    yield made
    await made.close()


async def _exchange(proxy: NetworkProxy, data: bytes) -> str:
    reader, writer = await asyncio.open_unix_connection(str(proxy.socket_path))
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    return answer.decode("latin-1")


async def test_a_name_that_resolves_to_loopback_is_refused(proxy: NetworkProxy) -> None:
    answer = await _exchange(proxy, b"CONNECT allowed.example:443 HTTP/1.1\r\n\r\n")
    assert answer.startswith("HTTP/1.1 403 Blocked by Vis: allowed.example resolves to 127.0.0.1")


async def test_an_address_is_seen_in_one_form(proxy: NetworkProxy, server: int) -> None:
    for written in ("[::ffff:127.0.0.1]", "[0:0::1]"):
        reader, writer = await asyncio.open_unix_connection(str(proxy.socket_path))
        writer.write(f"CONNECT {written}:{server} HTTP/1.1\r\n\r\n".encode())
        await asyncio.wait_for(reader.readline(), 20)  # answered (a tunnel, or a refusal)
        writer.close()
    asked = proxy.policy.asked  # type: ignore[attr-defined]
    assert [r.host for r in asked] == ["127.0.0.1", "::1"]


async def test_one_request_per_connection_each_decided(proxy: NetworkProxy, server: int) -> None:
    """A second request sent on the same connection is never forwarded: it would pass no
    filter."""
    one = f"GET http://127.0.0.1:{server}/first HTTP/1.1\r\nHost: x\r\n\r\n"
    two = f"GET http://127.0.0.1:{server}/second HTTP/1.1\r\nHost: x\r\n\r\n"
    answer = await _exchange(proxy, (one + two).encode())
    assert answer.startswith("HTTP/1.0 200") or answer.startswith("HTTP/1.1 200")
    assert "served /first" in answer
    assert SEEN == ["/first"]
    assert [r.path for r in proxy.policy.asked] == ["/first"]  # type: ignore[attr-defined]


async def test_a_tunnel_reaches_an_allowed_address(proxy: NetworkProxy, server: int) -> None:
    answer = await _exchange(
        proxy,
        f"CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\n"
        "GET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode(),
    )
    assert answer.startswith("HTTP/1.1 200 Connection established")
    assert "served /tunnel" in answer


async def test_what_the_proxy_cannot_check_is_refused(server: int) -> None:
    made = NetworkProxy(_Allow(HeaderRewrite((("X-Token", "t"),))))
    await made.start()
    try:
        tunnel = await _exchange(made, f"CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\n".encode())
        assert "rewrite the headers of an HTTPS request" in tunnel
        chunked = await _exchange(
            made,
            f"POST http://127.0.0.1:{server}/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            "0\r\n\r\n".encode(),
        )
        assert chunked.startswith("HTTP/1.1 501 Vis proxy: request bodies sent in chunks")
        https = await _exchange(made, b"GET https://example.com/ HTTP/1.1\r\n\r\n")
        assert "for https:// the client must use CONNECT" in https
        assert SEEN == []
    finally:
        await made.close()


def test_allowed_hosts_entries() -> None:
    rules = parse_allowed_hosts("pypi.org, *.pythonhosted.org 127.0.0.1:8000 [::1]:9000")
    assert rules[0].allows("pypi.org", 443) and not rules[0].allows("pypi.org", 22)
    assert rules[1].allows("files.pythonhosted.org", 443)
    assert not rules[1].allows("pythonhosted.org.evil.com", 443)
    assert rules[2].allows("127.0.0.1", 8000) and not rules[2].allows("127.0.0.1", 80)
    assert rules[3].allows("::1", 9000)
    assert parse_allowed_hosts("[0:0::1]:9000")[0].allows("::1", 9000)
    with pytest.raises(ValueError, match="is not a host"):
        check_value("network_allowed_hosts", "pypi.org, http://evil/")
    with pytest.raises(ValueError, match="port must be a number"):
        check_value("network_allowed_hosts", "pypi.org:99999")
