"""The OAuth-protected test server (``oauth_server_app.py``) as a real process on 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

from web_server import web_server

APP = Path(__file__).with_name("oauth_server_app.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def run_oauth_server() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a fresh server, stopped afterwards."""
    with web_server(APP) as base:
        yield base
