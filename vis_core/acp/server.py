"""``vis acp``: the protocol on stdio, and nothing else there (stray output goes to stderr)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any, cast

from vis_core.frontend import HostOptions, exit_now
from vis_core.model.channel import Channel

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


def run_acp(args: argparse.Namespace, workspace: Any) -> int:
    """Serve ACP until the client closes stdin; exit 0."""
    fd_in, fd_out = claim_stdio()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    options = HostOptions.from_args(args, workspace, Channel.ACP)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(serve(options, fd_in, fd_out))
    except KeyboardInterrupt:
        return exit_now(130)
    finally:
        loop.close()
    return exit_now(0)
