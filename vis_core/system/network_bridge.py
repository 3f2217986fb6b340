"""Inside the jail: ``127.0.0.1:PORT`` (what ``HTTP_PROXY`` names) relayed to Vis's proxy socket.

The jail's network namespace holds only loopback; this bridge is the one way from it to the
proxy's Unix socket, which asks the network policy about every request.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
import threading
from pathlib import Path

JAIL_SOCKET_DIR = "/run/vis-network"  # where the jail sees the proxy's folder
SOCKET_NAME = "proxy.sock"
BRIDGE_PORT = 3128  # the bridge's port on the jail's own loopback
ENV_SOCKET = "VIS_NETWORK_SOCKET"  # the proxy's socket as the jail sees it
ENV_PORT = "VIS_NETWORK_PORT"


def proxy_environment() -> dict[str, str]:
    """What a jailed process's environment holds for the proxy (clients read the lower- and
    upper-case names)."""
    url = f"http://127.0.0.1:{BRIDGE_PORT}"
    socket_path = f"{JAIL_SOCKET_DIR}/{SOCKET_NAME}"
    values = {ENV_SOCKET: socket_path, ENV_PORT: str(BRIDGE_PORT), "NO_PROXY": "", "no_proxy": ""}
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        values[name] = values[name.upper()] = url
    return values


def _listen() -> tuple[socket.socket, str] | None:
    """The bridge's socket, listening on ``127.0.0.1:`` the port the environment names, and
    the proxy socket it names, where each connection is relayed; None when it names none, or
    the port cannot be had (then nothing reaches the network)."""
    path = os.environ.get(ENV_SOCKET, "")
    port = os.environ.get(ENV_PORT, "")
    if not path or not port.isdigit():
        return None
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(64)
    except OSError:
        listener.close()
        return None
    return listener, path


def start_from_environment() -> threading.Thread | None:
    """Start the bridge in a thread when the environment names a proxy socket (the jailed
    sandbox)."""
    bridge = _listen()
    if bridge is None:
        return None
    thread = threading.Thread(target=_accept, args=bridge, name="vis-network-bridge", daemon=True)
    thread.start()
    return thread


def _accept(listener: socket.socket, socket_path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay, args=(client, socket_path), daemon=True).start()


def _relay(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _pump(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def python_home() -> Path:
    """The folder of Vis's interpreter and its standard library (shown in a jail that
    runs :func:`bridged`)."""
    return Path(sys.executable).resolve().parent.parent


@functools.cache
def _source() -> str:
    return Path(__file__).read_text(encoding="utf-8")


def bridged(argv: list[str]) -> list[str]:
    """``argv`` run by :func:`launch` (this file's source, so no Vis package is needed)."""
    return [str(Path(sys.executable).resolve()), "-I", "-S", "-c", _source(), *argv]


def launch(argv: list[str]) -> None:
    """Run ``argv`` with the bridge beside it (a jailed shell command): listen first, then a
    forked child relays while this process becomes the command. Stdlib only: run with
    ``python -I -S -c SOURCE argv...``, where no Vis package is importable."""
    bridge = _listen()
    if bridge is not None and os.fork() == 0:  # the relay: no terminal, none of the pipes
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            _accept(*bridge)
        finally:
            os._exit(0)
    if bridge is not None:
        bridge[0].close()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    launch(sys.argv[1:])
