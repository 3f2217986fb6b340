"""A test client on the ``agent-client-protocol`` package's client side: it runs ``vis acp``
as a subprocess and keeps every update, permission request and fs call it sees."""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from cli_support import seed_caches
from markdown_it import MarkdownIt
from warm_servers import vis_command


@dataclass
class EditorClient:
    """Records what the agent sends; ``buffers``: unsaved editor text by absolute path."""

    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[Any] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: dict[str, str] = field(default_factory=dict)
    terminals: dict[str, dict[str, Any]] = field(default_factory=dict)
    cancel_on_chunk: bool = False
    conn: Any = None
    got: asyncio.Event = field(default_factory=asyncio.Event)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.got.set()
        if self.cancel_on_chunk and update.session_update == "agent_message_chunk":
            self.cancel_on_chunk = False
            await self.conn.cancel(session_id=session_id)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        allow = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.writes[path] = content
        Path(path).write_text(content)  # the editor saves its buffer
        self.buffers.pop(path, None)
        return WriteTextFileResponse()

    async def wait_for_text(self, kind: str, text: str) -> str:
        """The text of ``kind`` updates once it holds ``text`` (updates arrive in order)."""
        while text not in self.text(kind):
            self.got.clear()
            await self.got.wait()
        return self.text(kind)

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, **kwargs: Any
    ) -> CreateTerminalResponse:
        """Runs the command as an editor's terminal does (here: its output kept)."""
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=kwargs.get("cwd"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = {"argv": [command, *(args or [])], "process": process}
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        output, _ = await terminal["process"].communicate()
        terminal["output"] = output.decode()
        return WaitForTerminalExitResponse(exit_code=terminal["process"].returncode)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        terminal = self.terminals[terminal_id]
        return TerminalOutputResponse(output=terminal.get("output", ""), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.terminals[terminal_id]["process"].kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.terminals[terminal_id]["released"] = True

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self, kind: str) -> str:
        return "".join(u.content.text for u in self.of(kind))


@contextlib.asynccontextmanager
async def vis_acp(
    client: EditorClient,
    cwd: Path,
    home: Path,
    script: Path | None = None,
    *extra: str,
    cold: bool = False,
) -> AsyncIterator[tuple[Any, Any]]:
    """``vis acp`` in ``cwd`` with ``VIS_HOME=home`` on the scripted provider (no model
    without ``script``), ``extra`` after its arguments. Started warm
    (``warm_servers.vis_command``), or as a fresh ``python -m vis_core.cli`` when ``cold``."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(home)
    env.pop("VIS_MODEL", None)
    seed_caches(home)
    args = ["acp"]
    if script is not None:
        args += ["--provider", "scripted", "--script", str(script)]
    args += extra
    cold_command = [sys.executable, "-m", "vis_core.cli", *args]
    program, *argv = cold_command if cold else vis_command(*args, env=env)
    async with spawn_agent_process(
        cast(Any, client),
        program,
        *argv,
        env=env,
        cwd=cwd,
        # the library's 2 s, then terminate(), raises if vis exits just after them (a loaded CI)
        transport_kwargs={"shutdown_timeout": 30.0},
        use_unstable_protocol=True,
    ) as (conn, process):
        yield conn, process


def rendered(markdown: str) -> tuple[set[str], str]:
    """The HTML tags ``markdown`` renders to (as an editor's CommonMark with tables and
    strikethrough does) and the text it shows."""
    out = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    tags = set(re.findall(r"<([a-z0-9]+)", out))
    return tags, html.unescape(re.sub(r"<[^>]+>", "", out))
