"""Fixtures of the sandbox tests: a real child process with a small table of host tools."""

from __future__ import annotations

import asyncio
import builtins
import os
import pwd
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from vis_core.model.handles import HostHandle
from vis_core.sandbox import Sandbox, ToolEntry


class Shell(HostHandle):
    """A host object that stays on the host: the sandbox gets a proxy with async methods."""

    __vis_methods__ = ("logs", "wait")

    def __init__(self, command: str) -> None:
        self.command = command
        self.lines: list[str] = [f"$ {command}"]

    def logs(self) -> str:
        return "\n".join(self.lines)

    async def wait(self, seconds: float = 0.0) -> int:
        await asyncio.sleep(seconds)
        self.lines.append("done")
        return 0

    def secret(self) -> str:  # not in __vis_methods__: never reachable from the sandbox
        return "host-only"

    def __repr__(self) -> str:
        return f"<Shell {self.command!r}>"


class HostTools:
    """The host side of the test tools; records every call it served."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.entries: list[ToolEntry] = [
            ToolEntry("echo", "Return the arguments as they arrived."),
            ToolEntry("fail", "Raise the named exception."),
            ToolEntry(
                "git.status",
                "Show the working tree status.",
                {
                    "name": "git.status",
                    "signature": "(path: str = '.', *, short=False)",
                },
            ),
            ToolEntry("gate", "Wait until `count` calls are in flight at once."),
            ToolEntry("shell", "Start a command; returns a handle."),
            ToolEntry("describe", "Say what a handle argument is on the host."),
            ToolEntry("hang", "Wait until cancelled; the host records the cancel."),
            ToolEntry("same", "Return the first argument as it is."),
            ToolEntry("undecodable", "Return, or raise with, a file name that is not UTF-8."),
        ]
        self.gate_waiting = 0
        self.gate_open = asyncio.Event()
        self.shells: list[Shell] = []
        self.cancelled: list[Any] = []

    async def called(self, *args: Any) -> None:
        """Wait until the sandbox called ``echo(*args)``: the block that calls it is running."""
        async with asyncio.timeout(30):
            while ("echo", args, {}) not in self.calls:
                await asyncio.sleep(0.01)

    async def __call__(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls.append((name, args, kwargs))
        if name == "echo":
            return {"args": args, "kwargs": kwargs}
        if name == "fail":
            kind, message = args
            if kind == "custom":
                raise _CustomError(message)
            raise getattr(builtins, kind)(message)
        if name == "git.status":
            return f"clean {args} {kwargs}"
        if name == "gate":
            self.gate_waiting += 1
            if self.gate_waiting >= args[0]:
                self.gate_open.set()
            await asyncio.wait_for(self.gate_open.wait(), 5)
            return self.gate_waiting
        if name == "shell":
            shell = Shell(args[0])
            self.shells.append(shell)
            return shell
        if name == "same":
            return args[0]
        if name == "undecodable":
            file_name = os.fsdecode(b"x\xff")  # "x\udcff", as os.listdir gives it
            if args[0] == "raise":
                raise FileNotFoundError(f"no file {file_name}")
            return [file_name]
        if name == "hang":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.append(args[0])
                raise
        if name == "describe":
            value = args[0]
            return f"{type(value).__name__} {getattr(value, 'command', '')}"
        raise LookupError(f"no tool {name}")


class _CustomError(Exception):
    """An exception type the sandbox does not have."""


MakeSandbox = Callable[..., Sandbox]


@pytest.fixture
def host_tools() -> HostTools:
    return HostTools()


@pytest.fixture
async def make_sandbox(workspace: Path, host_tools: HostTools) -> AsyncIterator[MakeSandbox]:
    made: list[Sandbox] = []

    def make(**options: Any) -> Sandbox:
        options.setdefault("workspace", workspace)
        options.setdefault("call_tool", host_tools)
        options.setdefault("tools", lambda: host_tools.entries)
        box = Sandbox(**options)
        made.append(box)
        return box

    yield make
    for box in made:
        await box.close()


@pytest.fixture
async def sandbox(make_sandbox: MakeSandbox) -> Sandbox:
    return make_sandbox()


@pytest.fixture
def plain_uid() -> int:
    """An ordinary user's uid for this test, as a bare number: no ``/etc/passwd`` entry, so
    nothing in the real ``/etc`` changes (useradd's files there raced other tests' jails)."""
    if os.geteuid() != 0:
        pytest.skip("not root: this run is itself the ordinary-user case")
    while True:
        uid = random.randrange(200_000, 2_000_000)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
