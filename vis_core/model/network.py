"""What the jail's network proxy asks of network filters, and the allowed-hosts list."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_PORTS = (80, 443)  # what an allowed-hosts entry without a port allows


class FilterPhase(StrEnum):
    """Which half of a network filter runs: the request's or the response's."""

    REQUEST = "request"
    RESPONSE = "response"


@dataclass(frozen=True)
class NetworkRequest:
    """One request from the jail. ``method`` is ``CONNECT`` for HTTPS (and any other tunnel):
    then only ``host`` and ``port`` are known (the rest is encrypted), ``path`` is empty and
    ``headers`` are the proxy request's own. For plain HTTP every field is the request's."""

    method: str
    scheme: str  # "http", or "https" for a CONNECT tunnel
    host: str
    port: int
    path: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def url(self) -> str:
        default = 443 if self.scheme == "https" else 80
        port = "" if self.port == default else f":{self.port}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}{port}{self.path}"

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        folded = name.lower()
        return next((v for k, v in self.headers if k.lower() == folded), None)


@dataclass(frozen=True)
class NetworkResponse:
    """The answer to a plain-HTTP ``request``: its status and headers (the body follows)."""

    request: NetworkRequest
    status: int
    headers: tuple[tuple[str, str], ...] = ()

    def header(self, name: str) -> str | None:
        folded = name.lower()
        return next((v for k, v in self.headers if k.lower() == folded), None)


@dataclass(frozen=True)
class HeaderRewrite:
    """A filter's answer that allows the request with headers set (replaced) and removed."""

    set: tuple[tuple[str, str], ...] = ()
    remove: tuple[str, ...] = ()


# -- the allowed-hosts list ------------------------------------------------------------------


@dataclass(frozen=True)
class HostRule:
    """``example.com``, ``*.example.com`` (its subdomains), an IP address, each optionally
    with ``:port`` (else ports 80 and 443)."""

    host: str
    ports: tuple[int, ...] = DEFAULT_PORTS

    def allows(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        host = host.lower().rstrip(".")
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host


def parse_allowed_hosts(text: str) -> tuple[HostRule, ...]:
    """The rules of an ``network_allowed_hosts`` value (entries separated by commas or
    spaces); a ``ValueError`` names an entry that is not a host."""
    return tuple(_rule(entry) for entry in text.replace(",", " ").split())


def _rule(entry: str) -> HostRule:
    text = entry.strip().lower()
    if any(c in text for c in "/@?#"):
        raise ValueError(f"{entry!r} is not a host; write example.com, not a URL")
    host, port = text, ""
    if text.startswith("["):  # [::1]:8080
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    ports = DEFAULT_PORTS
    if port:
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535")
        ports = (int(port),)
    bare = host.removeprefix("*.")
    try:
        ipaddress.ip_address(bare)
        is_ip = True
    except ValueError:
        is_ip = False
    if is_ip and host.startswith("*."):
        raise ValueError(f"{entry!r}: a wildcard takes a domain name, not an address")
    labels = bare.split(".")
    valid = is_ip or (
        bare
        and len(bare) <= 253
        and all(label and len(label) <= 63 for label in labels)
        and all(c.isalnum() or c in "-_." for c in bare)
    )
    if not valid or host in ("*", "*."):
        raise ValueError(
            f"{entry!r} is not a host; write example.com, *.example.com, 10.0.0.5 or "
            "example.com:8080"
        )
    return HostRule(str(ipaddress.ip_address(host)) if is_ip else host, ports)
