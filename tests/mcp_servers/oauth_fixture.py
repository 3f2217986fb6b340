"""The OAuth-protected test server (``oauth_server_app.py``) as a real process on 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

from web_server import web_server

APP = Path(__file__).with_name("oauth_server_app.py")


def free_port() -> int:
    """A port for a ``callbackPort`` that no other test is handed before sign-in listens on it.
    A port only bound and closed could be given to another xdist worker's ``bind(0)`` in
    between; this one is left in TIME_WAIT (one connection, closed by the listening side),
    where the kernel gives it to no ``bind(0)`` for a minute, while a listener that sets
    SO_REUSEADDR, as asyncio's servers do, may take it."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        address = listener.getsockname()
        with socket.create_connection(address):
            accepted, _ = listener.accept()
            accepted.close()  # this side closes first: the TIME_WAIT is on the port
        return address[1]


@contextlib.contextmanager
def run_oauth_server() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a fresh server, stopped afterwards."""
    with web_server(APP) as base:
        yield base
