"""The jail's only way out: an HTTP(S) proxy Vis runs on a Unix socket, asking a policy first.

A jailed process has a network namespace of its own with nothing but loopback; the proxy's
socket is bound into the jail (:data:`JAIL_SOCKET_DIR`) and a bridge there
(:mod:`network_bridge`) listens on ``127.0.0.1:`` :data:`BRIDGE_PORT` for ``HTTP_PROXY``.
Each request is asked of the policy before any name is resolved: ``CONNECT host:port`` (HTTPS
and other tunnels; only host and port are visible, the rest is encrypted end to end) or an
absolute ``http://`` request (every header visible; rewritten as the policy says). A refusal
answers ``403`` with the reason in the status line, which is what a client's error shows.
A name that resolves to a loopback, link-local or otherwise special address is refused
unless the request named that address (or ``localhost``) itself: an allowed name cannot
lead to the host's own services or a cloud metadata endpoint; 0.0.0.0 and ``::`` (which
reach the host's own services too) are refused however written. A plain request reaches the
server with the Host the policy allowed, never its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from vis_core.model.network import HeaderRewrite, NetworkRequest, NetworkResponse
from vis_core.system.leftovers import owned_folder, release
from vis_core.system.loops import end_tasks
from vis_core.system.network_bridge import SOCKET_NAME

log = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024  # bytes of a request's or response's head
HEAD_TIMEOUT = 30.0  # seconds the jail has to send a request's head
ANSWER_TIMEOUT = 300.0  # seconds a server has to start its answer
MAX_CONNECTIONS = 128  # at once, per session: the jail cannot exhaust Vis's descriptors
# metadata endpoints that are not link-local: AWS's over IPv6, Alibaba's
_METADATA = frozenset({"fd00:ec2::254", "100.100.100.200"})
_METHOD = re.compile(r"[A-Z][A-Z-]{0,31}")
CONNECT_TIMEOUT = 15.0  # seconds to reach the destination
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)


@dataclass(frozen=True)
class Verdict:
    """The policy's answer: allowed (with header rewrites for plain HTTP), or why not."""

    allowed: bool
    reason: str = ""
    rewrites: tuple[HeaderRewrite, ...] = ()


class NetworkPolicy:
    """What the proxy asks; the default refuses everything."""

    async def request(self, request: NetworkRequest) -> Verdict:
        return Verdict(False, "the jail has no network")

    async def response(self, response: NetworkResponse) -> Verdict:
        return Verdict(True)


class _Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class NetworkProxy:
    """The proxy of one session's jail: a Unix socket in a private folder of its own."""

    def __init__(
        self,
        policy: NetworkPolicy,
        on_refused: Callable[[NetworkRequest | None, str], Awaitable[None]] | None = None,
        resolve: Callable[[str, int], Awaitable[list[str]]] | None = None,
    ) -> None:
        self.policy = policy
        self.on_refused = on_refused
        self._resolve = resolve or _resolve
        self.folder: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)

    @property
    def socket_path(self) -> Path:
        assert self.folder is not None
        return self.folder / SOCKET_NAME

    async def start(self) -> Path:
        """Listen; the folder to bind into the jail (0700, holding only the socket)."""
        if self._server is not None and self.folder is not None:
            return self.folder
        # 0700, short (a socket path is limited to 107 bytes), swept if Vis is killed
        self.folder = owned_folder("vis-net-")
        self._server = await asyncio.start_unix_server(
            self._serve, path=str(self.socket_path), limit=MAX_HEAD
        )
        return self.folder

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()
        await end_tasks(self._tasks)
        folder, self.folder = self.folder, None
        if folder is not None:
            release(folder)

    # -- one connection ----------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._slots.locked():
            await _answer(writer, 503, f"more than {MAX_CONNECTIONS} connections at once")
            writer.close()
            return
        async with self._slots:
            await self._serve_one(reader, writer)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        request: NetworkRequest | None = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
            request, length = _parse_request(head)
            verdict = await self.policy.request(request)
            if not verdict.allowed:
                raise _Refused(403, verdict.reason)
            if request.method == "CONNECT" and verdict.rewrites:
                raise _Refused(
                    403,
                    "a network filter asked to rewrite the headers of an HTTPS request, which "
                    "Vis cannot see (it does not decrypt TLS); refused",
                )
            upstream_reader, upstream = await self._connect(request)
            try:
                if request.method == "CONNECT":
                    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    await writer.drain()
                    await _pipe_both(reader, writer, upstream_reader, upstream)
                else:
                    await self._forward(
                        request, length, verdict, reader, writer, upstream_reader, upstream
                    )
            finally:
                upstream.close()
        except _Refused as refused:
            await _answer(writer, refused.status, refused.reason)
            if self.on_refused is not None:
                try:
                    await self.on_refused(request, refused.reason)
                except Exception:  # telling of it must not break the proxy
                    log.exception("could not tell of a refused request")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            await _answer(writer, 400, "the proxy request was cut off, too long or too slow")
        except ConnectionError:
            pass
        except Exception:  # a bug must not stop the proxy: this connection fails alone
            log.exception("the jail's network proxy failed on a connection")
            await _answer(writer, 502, "the proxy failed on this request")
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _connect(
        self, request: NetworkRequest
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            addresses = await asyncio.wait_for(
                self._resolve(request.host, request.port), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError) as exc:
            raise _Refused(502, f"cannot resolve {request.host}: {exc}") from None
        named = _is_address(request.host) or request.host.lower() == "localhost"
        if not named:
            special = [a for a in addresses if _special(a)]
            if special:
                raise _Refused(
                    403,
                    f"{request.host} resolves to {special[0]}, a local or special address; "
                    "name that address itself to reach it",
                )
        problem = "no address"
        for address in addresses:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(address, request.port, limit=MAX_HEAD),
                    CONNECT_TIMEOUT,
                )
            except (OSError, TimeoutError) as exc:
                problem = str(exc) or type(exc).__name__
        raise _Refused(502, f"cannot connect to {request.host}:{request.port}: {problem}")

    async def _forward(
        self,
        request: NetworkRequest,
        length: int,
        verdict: Verdict,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        upstream_reader: asyncio.StreamReader,
        upstream: asyncio.StreamWriter,
    ) -> None:
        """One plain-HTTP request (its body of ``length`` bytes), then its answer; the
        connection closes after it, so every request passes the policy."""
        headers = _rewritten(request.headers, verdict.rewrites)
        lines = [f"{request.method} {request.path} HTTP/1.1"]
        lines += [f"{name}: {value}" for name, value in headers]
        lines.append("Connection: close")
        upstream.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        remaining = length
        while remaining > 0:
            chunk = await reader.read(min(remaining, 65536))
            if not chunk:
                raise ConnectionError("the client closed before its body ended")
            upstream.write(chunk)
            remaining -= len(chunk)
        await upstream.drain()
        head = await asyncio.wait_for(upstream_reader.readuntil(b"\r\n\r\n"), ANSWER_TIMEOUT)
        status, reply_headers = _parse_response(head)
        answer = NetworkResponse(request, status, reply_headers)
        checked = await self.policy.response(answer)
        if not checked.allowed:
            raise _Refused(403, checked.reason)
        kept = [(n, v) for n, v in reply_headers if n.lower() not in ("connection", "keep-alive")]
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        out = [status_line, *(f"{n}: {v}" for n, v in kept), "Connection: close"]
        writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        await _copy(upstream_reader, writer)


# -- parsing -----------------------------------------------------------------------------------


def _headers(lines: list[str]) -> tuple[tuple[str, str], ...]:
    found = []
    for line in lines:
        if not line:
            continue
        if "\r" in line or "\n" in line:  # a lenient server would see a header here
            raise _Refused(400, "a header line holds a bare CR or LF")
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or any(c in name for c in " \t"):
            raise _Refused(400, "a malformed header line")
        found.append((name, value.strip()))
    return tuple(found)


def _parse_request(head: bytes) -> tuple[NetworkRequest, int]:
    """The request a proxy head asks for, and its body's length (plain HTTP)."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:
        raise _Refused(400, "the request head is not text") from None
    if "\0" in text:
        raise _Refused(400, "the request head holds a NUL")
    request_line, *rest = text[:-4].split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _Refused(400, "not an HTTP/1.x proxy request")
    method, target, _version = parts
    if not _METHOD.fullmatch(method):  # forwarded as written: a lone CR or tab would split it
        raise _Refused(400, f"{method[:20]!r} is not an HTTP method")
    headers = _headers(rest)
    if method == "CONNECT":
        host, port = _authority(target, None)
        return NetworkRequest("CONNECT", "https", host, port, "", headers), 0
    split = urlsplit(target)
    if split.scheme.lower() != "http" or not split.netloc:
        raise _Refused(
            400,
            f"the proxy takes http:// requests and CONNECT tunnels, not {target[:80]!r}; "
            "for https:// the client must use CONNECT (HTTPS_PROXY)",
        )
    if "@" in split.netloc:
        raise _Refused(400, "a URL with credentials in its host part is refused")
    host, port = _authority(split.netloc, 80)
    path = split.path or "/"
    if split.query:
        path += "?" + split.query
    if any(n.lower() == "transfer-encoding" for n, _ in headers):
        raise _Refused(501, "request bodies sent in chunks are not supported by Vis's proxy")
    lengths = {v for n, v in headers if n.lower() == "content-length"}
    if len(lengths) > 1 or (lengths and not next(iter(lengths)).isdigit()):
        raise _Refused(400, "a malformed Content-Length")
    length = int(next(iter(lengths))) if lengths else 0
    # the server is asked for the host the policy allowed, never the request's own Host
    # (another site on the same address): a proxy replaces it (RFC 9112, 3.2.2)
    kept = tuple((n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP | {"host"})
    kept = (("Host", split.netloc), *kept)
    return NetworkRequest(method, "http", host, port, path, kept), length


def _authority(text: str, default: int | None) -> tuple[str, int]:
    host, port_text = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
    if not port_text and default is not None:
        port_text = str(default)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _Refused(400, f"{text[:80]!r} has no valid port")
    host = host.lower().rstrip(".")
    if not host.isascii():  # resolved as its IDNA form: the filters would see another name
        raise _Refused(400, f"{text[:80]!r}: write a host name in ASCII (its punycode form, xn--…)")
    if not host or not all(c.isalnum() or c in "-._:" for c in host):
        raise _Refused(400, f"{text[:80]!r} is not a host name")
    host = _canonical(host)
    if host in ("0.0.0.0", "::"):  # Linux connects it to the host's own loopback
        raise _Refused(
            403, f"{host} is no destination (it reaches this machine's own services); refused"
        )
    return host, int(port_text)


def _canonical(host: str) -> str:
    """An address in its one written form (``::ffff:127.0.0.1`` is ``127.0.0.1``), so a
    filter that names an address sees it however the request wrote it; a name as given."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _parse_response(head: bytes) -> tuple[int, tuple[tuple[str, str], ...]]:
    text = head.decode("latin-1")
    status_line, *rest = text[:-4].split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise _Refused(502, "the server's answer is not HTTP")
    return int(parts[1]), _headers(rest)


def _rewritten(
    headers: tuple[tuple[str, str], ...], rewrites: tuple[HeaderRewrite, ...]
) -> list[tuple[str, str]]:
    result = list(headers)
    for rewrite in rewrites:
        dropped = {name.lower() for name in rewrite.remove} | {n.lower() for n, _ in rewrite.set}
        result = [(n, v) for n, v in result if n.lower() not in dropped]
        result += list(rewrite.set)
    return result


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _special(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        str(ip) in _METADATA
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    )


async def _resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    """A refusal the client shows: the reason in the status line and the body."""
    phrase = "".join(c if 32 <= ord(c) < 127 else " " for c in reason)[:300]
    title = "Blocked by Vis" if status == 403 else "Vis proxy"
    body = f"{title}: {phrase}\n".encode()
    head = (
        f"HTTP/1.1 {status} {title}: {phrase}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nX-Vis-Blocked: {phrase}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(ConnectionError, RuntimeError):
        writer.write(head.encode("latin-1") + body)
        await writer.drain()


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


async def _pipe_both(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream: asyncio.StreamWriter,
) -> None:
    async with asyncio.TaskGroup() as group:
        group.create_task(_copy(reader, upstream))
        group.create_task(_copy(upstream_reader, writer))
