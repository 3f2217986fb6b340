"""A test web server as a real process, serving on a socket the test already listens on: the
port is held from the start, so no other xdist worker (nor an outgoing connection) can take it
between a port being picked and the server binding it. It starts warm (``warm_servers.py``)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from warm_servers import command

START = 120.0  # seconds a server may take to import its stack and answer on a loaded machine


@contextlib.contextmanager
def web_server(script: Path, *args: str) -> Iterator[str]:
    """Run ``python script *args FD`` warm (it serves on the listening socket FD) and yield
    its ``http://127.0.0.1:PORT`` once it answers HTTP; stop it afterwards."""
    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]
        process = subprocess.Popen(
            command(script, *args, str(listening.fileno())),
            pass_fds=[listening.fileno()],
            stdout=subprocess.DEVNULL,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _answers(base, process)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(base: str, process: subprocess.Popen[bytes]) -> None:
    """Wait for the server's first answer (any status): the connection waits in the socket's
    queue until the server accepts it, so one request is the whole readiness check."""
    try:
        urllib.request.urlopen(f"{base}/", timeout=START).close()
    except urllib.error.HTTPError:
        pass  # an answer, and all we asked for
    except OSError as exc:  # the queue dropped (the server ended) or the wait ran out
        ended = process.poll()
        raise RuntimeError(f"{process.args!r} did not serve (exit {ended}): {exc}") from None
