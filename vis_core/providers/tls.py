"""One verified TLS context per process for the HTTP clients (the providers', MCP servers')."""

from __future__ import annotations

import functools
import os
import ssl


def verified_context() -> ssl.SSLContext:
    """The context httpx makes when told nothing (the system's certificates, or those
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name), made once for each pair of those values:
    loading the certificates costs ~25 ms of CPU, and each provider made two such contexts (its
    SDK client and its server probe), a ``vis run`` on an OpenAI-compatible server among them,
    and each connection to an MCP server over HTTP made one more (its sign-in too).
    Only HTTP/1.1 clients share it (httpcore sets the ALPN protocols on the context it is
    given at each connection)."""
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    import httpx2

    return httpx2.create_ssl_context()  # it reads the two variables itself
