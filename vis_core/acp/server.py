"""``vis acp``: the protocol on stdio, and nothing else there (stray output goes to stderr)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import selectors
import stat
import sys
import threading
from typing import Any, cast

from vis_core.frontend import HostOptions, exit_now
from vis_core.model.channel import Channel
from vis_core.model.exit_status import EXIT_INTERRUPTED, EXIT_OK

CLOSE_SECONDS = 10
STDIO_LIMIT = 50 * 1024 * 1024  # a pasted image travels as one line of base64


def claim_stdio() -> tuple[int, int]:
    """Private copies of stdin and stdout for the protocol; fd 0 then reads /dev/null and fd
    1 writes to stderr, so a print, a library's warning or a child process that inherits
    them can never write into (or read from) the protocol channel."""
    protocol_in, protocol_out = os.dup(0), os.dup(1)  # not inherited by children
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return protocol_in, protocol_out


def _pollable(fd: int, event: int) -> bool:
    """Whether the loop can wait on ``fd`` (a pipe, a socket, a terminal): not a regular
    file, and not a device the kernel will not poll (``/dev/null``)."""
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, event)
        except OSError:
            return False
    return True


def _copying(source: int, target: int, name: str) -> threading.Thread:
    """A thread that copies ``source`` to ``target`` until the end of ``source``, then closes
    both: what stands between a file and the loop, which waits on pipes only."""

    def copy() -> None:
        try:
            while chunk := os.read(source, 1 << 16):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(target, view) :]
        except OSError:
            pass  # the other end is gone: so is the protocol
        finally:
            os.close(source)
            os.close(target)

    thread = threading.Thread(target=copy, name=name, daemon=True)
    thread.start()
    return thread


def pipe_ends(fd_in: int, fd_out: int) -> tuple[int, int, threading.Thread | None]:
    """``fd_in`` and ``fd_out`` as ends the loop can wait on: a file or ``/dev/null`` given
    as stdin (requests replayed from a file) or stdout (answers kept in one) is copied
    through a pipe by a thread. The thread copying the answers out is returned, to be waited
    for once the protocol's writer is closed."""
    if not _pollable(fd_in, selectors.EVENT_READ):
        read, write = os.pipe()
        _copying(fd_in, write, "vis-acp-input")
        fd_in = read
    if _pollable(fd_out, selectors.EVENT_WRITE):
        return fd_in, fd_out, None
    read, write = os.pipe()
    return fd_in, write, _copying(read, fd_out, "vis-acp-output")


async def _streams(fd_in: int, fd_out: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd_in, "rb", buffering=0)
    )
    from acp.stdio import _WritePipeProtocol  # the package's own writer protocol (drain)

    protocol = _WritePipeProtocol()
    transport, _ = await loop.connect_write_pipe(
        lambda: protocol, os.fdopen(fd_out, "wb", buffering=0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve(options: HostOptions, fd_in: int, fd_out: int) -> None:
    from acp import run_agent

    from vis_core.acp.agent import VisAgent

    agent = VisAgent(options)
    reader, writer = await _streams(fd_in, fd_out)
    try:
        # VisAgent answers the methods Vis supports; the others are "method not found"
        await run_agent(cast(Any, agent), writer, reader, use_unstable_protocol=True)
    finally:
        try:
            await asyncio.wait_for(agent.close(), CLOSE_SECONDS)
        except TimeoutError:
            print(f"vis acp: closing took longer than {CLOSE_SECONDS} s; stopped", file=sys.stderr)
        await _flushed(writer)


async def _flushed(writer: asyncio.StreamWriter) -> None:
    """Until what was written has left the loop's buffer (at most ``CLOSE_SECONDS``), then
    the protocol's end is closed: the process ends right after, and the client (or the file
    answers are copied to) gets every answer."""
    transport = writer.transport
    for _ in range(int(CLOSE_SECONDS / 0.01)):
        if not transport.get_write_buffer_size():
            break
        await asyncio.sleep(0.01)
    transport.close()
    await asyncio.sleep(0)  # the transport closes its end on the loop's next round


def run_acp(args: argparse.Namespace, workspace: Any) -> int:
    """Serve ACP until the client closes stdin; exit 0."""
    fd_in, fd_out, copying_out = pipe_ends(*claim_stdio())
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    options = HostOptions.from_args(args, workspace, Channel.ACP)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(serve(options, fd_in, fd_out))
    except KeyboardInterrupt:
        return exit_now(EXIT_INTERRUPTED)
    finally:
        loop.close()
    if copying_out is not None:
        copying_out.join()
    return exit_now(EXIT_OK)
