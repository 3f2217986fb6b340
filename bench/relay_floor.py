"""Figure: the floor under the extension round trip's ratio (``extension_round_trip.py``).

The same process shapes with no work at all: a client writes 16 bytes to a pipe and waits for
them back, served by an asyncio loop's reader callback as the host serves the sandbox, either
answered there (the anchor's shape: sandbox → host → sandbox) or relayed to a third process
that echoes them (the extension's shape: sandbox → host → worker → host → sandbox). What the
relay costs over the direct answer here is paid by every extension call before any decoding,
Activity or tool runs. Printed: both medians and their ratio, alternating RUNS times.
Run: ``.venv/bin/python bench/relay_floor.py`` (``taskset -c 0`` for one CPU).
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import time
from collections.abc import Callable

CALLS = 20_000
RUNS = 3
FRAME = b"x" * 16


def _echo(read: int, write: int) -> None:
    while data := os.read(read, 65536):
        os.write(write, data)


def _client(to_server: int, from_server: int, report: int) -> None:
    times = []
    for _ in range(CALLS):
        start = time.perf_counter_ns()
        os.write(to_server, FRAME)
        os.read(from_server, 65536)
        times.append(time.perf_counter_ns() - start)
    os.write(report, str(statistics.median(times)).encode())


def _fork(target: Callable[..., None], *args: int) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            target(*args)
        finally:
            os._exit(0)
    return pid


async def _serve(relay: bool) -> float:
    """One client's median round trip (µs), served by this loop, relayed or answered."""
    loop = asyncio.get_running_loop()
    client_in, to_server = os.pipe()
    from_server, client_out = os.pipe()
    report_read, report_write = os.pipe()
    worker_in, to_worker = os.pipe()
    from_worker, worker_out = os.pipe()
    pids = [_fork(_echo, worker_in, worker_out)] if relay else []
    pids.append(_fork(_client, to_server, from_server, report_write))
    os.close(report_write)

    def from_client() -> None:
        os.write(to_worker if relay else client_out, os.read(client_in, 65536))

    def answered() -> None:
        os.write(client_out, os.read(from_worker, 65536))

    loop.add_reader(client_in, from_client)
    loop.add_reader(from_worker, answered)
    done = loop.create_future()
    loop.add_reader(report_read, lambda: done.done() or done.set_result(os.read(report_read, 64)))
    median = float(await done) / 1000
    for fd in (client_in, from_worker, report_read):
        loop.remove_reader(fd)
    for fd in (to_server, from_server, client_out, to_worker, worker_in, worker_out, report_read):
        os.close(fd)
    os.close(client_in)
    os.close(from_worker)
    for pid in pids:  # the echo holds copies of the pipes: it ends by signal
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return median


async def main() -> None:
    direct, relayed = [], []
    for _ in range(RUNS):
        direct.append(await _serve(relay=False))
        relayed.append(await _serve(relay=True))
    ratio = statistics.median(r / d for r, d in zip(relayed, direct, strict=True))
    print(f"direct (sandbox → host shape): median {statistics.median(direct):.1f} µs")
    print(f"relayed (sandbox → host → worker shape): median {statistics.median(relayed):.1f} µs")
    print(f"ratio with no work at all: {ratio:.2f}×")


if __name__ == "__main__":
    asyncio.run(main())
