"""Limits of the sandbox child: block time, memory and processes (settings with defaults)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from vis_core.events import BlockFinished
from vis_core.model.block import error_line
from vis_core.printmode import block_line
from vis_core.sandbox.state import SessionState
from vis_core.settings.core import BLOCK_TIME_LIMIT, MEMORY_LIMIT, PROCESS_LIMIT
from vis_core.system.lifetime import ChildLimits
from vis_core.system.shell import ShellManager
from vis_core.tools import ToolContext
from vis_tui.block_info import BlockInfo
from vis_tui.widgets.block_row import block_content

from .conftest import HostTools, MakeSandbox


def test_limits_are_settings_with_defaults() -> None:
    assert (BLOCK_TIME_LIMIT.default, MEMORY_LIMIT.default, PROCESS_LIMIT.default) == (
        "1800",
        "8192",
        "4096",
    )


async def test_a_block_past_its_time_limit_is_stopped(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox(time_limit=1.0)
    result = await box.run("import time\nprint('started', flush=True)\ntime.sleep(60)")
    assert result.error is not None and "time limit of 1 s" in result.error
    assert "block_time_limit" in result.error
    after = await box.run("print('next block runs')")
    assert after.error is None and "next block runs" in after.stdout


async def test_a_block_stopped_at_its_time_limit_says_so_on_its_line(
    make_sandbox: MakeSandbox,
) -> None:
    """Its line (vis run's, the app's row) said only 'KeyboardInterrupt', the last line of the
    traceback under the note; it now says the time limit stopped it."""
    box = make_sandbox(time_limit=1.0)
    code = "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.1)"
    result = await box.run(code)
    assert result.error is not None and "KeyboardInterrupt" in result.error
    note = (
        "The block ran longer than its time limit of 1 s (setting block_time_limit) "
        "and was stopped."
    )
    assert error_line(result.error) == note
    line = block_line(code, BlockFinished("s", error=result.error, duration=1.0))
    assert line.endswith(f"[red]{note}[/]")
    row = block_content(BlockInfo("i", code, ended=True, error=result.error, duration=1.0))
    assert str(row).splitlines()[-1].strip() == note


async def test_memory_limit_makes_a_huge_allocation_fail(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox(limits=ChildLimits(memory_mb=512))
    result = await box.run("data = bytearray(2 * 1024 * 1024 * 1024)")
    assert result.error is not None and "MemoryError" in result.error
    small = await box.run("data = bytearray(16 * 1024 * 1024)\nprint(len(data))")
    assert small.error is None and "16777216" in small.stdout


async def test_shells_get_the_limits(workspace: Path, tmp_path: Path) -> None:
    limits = ChildLimits(memory_mb=512, processes=300)
    ctx = ToolContext(workspace, "s", tmp_path / "o", shells=ShellManager(limits=limits))
    try:
        handle = await ctx.shells.start(
            "ulimit -d; ulimit -u", cwd=workspace, output_dir=tmp_path / "o"
        )
        status = await handle.wait(30)
    finally:
        await ctx.close()
    assert status.output.split() == [str(512 * 1024), "300"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the note is about root")
def test_an_unenforced_process_limit_is_said() -> None:
    assert "not enforced" in ChildLimits(processes=100).notes()[0]


async def test_calls_over_the_bound_fail_in_the_block(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox(max_calls=8)
    code = (
        "import asyncio\n"
        "results = await asyncio.gather(*[gate(8) for _ in range(20)], return_exceptions=True)\n"
        "print([r for r in results if not isinstance(r, Exception)])\n"
        "print({f'{type(r).__name__}: {r}' for r in results if isinstance(r, Exception)})\n"
        "await asyncio.gather(*[gate(8) for _ in range(9)])\n"
    )
    result = await asyncio.wait_for(box.run(code), 30)
    assert result.stdout == (
        "[8, 8, 8, 8, 8, 8, 8, 8]\n"
        "{'RuntimeError: too many tool calls in flight (8); await some before starting more'}\n"
    )
    assert result.error is not None and result.error.endswith(
        "RuntimeError: too many tool calls in flight (8); await some before starting more\n"
    )
    assert result.restarted is None and "broke the protocol" not in result.error
    after = await asyncio.wait_for(box.run("print(await echo('after'))"), 30)
    assert after.error is None and after.restarted is None, after.error
    assert after.stdout == "{'args': ('after',), 'kwargs': {}}\n"


async def test_a_call_over_the_message_limit_fails_in_the_block(
    make_sandbox: MakeSandbox, host_tools: HostTools
) -> None:
    box = make_sandbox(message_limit=1 << 20)
    result = await asyncio.wait_for(box.run("await echo('x' * (2 << 20))"), 30)
    assert result.error is not None and result.restarted is None
    assert "ValueError: the arguments of this call take 2,097,1" in result.error, result.error
    assert "over the 1,048,576-byte limit of one tool call" in result.error
    assert host_tools.calls == []
    after = await asyncio.wait_for(box.run("print(await echo('small'))"), 30)
    assert after.error is None and after.restarted is None, after.error


async def test_a_snapshot_over_the_message_limit_is_not_sent(make_sandbox: MakeSandbox) -> None:
    saved: list[dict[str, Any]] = []
    box = make_sandbox(message_limit=1 << 20, snapshot_save=saved.append)
    result = await asyncio.wait_for(box.run("big = 'x' * (2 << 20)\nsmall = 1"), 30)
    assert result.error is not None and result.restarted is None
    assert "[vis: saving helpers and variables failed: ValueError: the snapshot takes" in (
        result.error
    )
    assert "over the 1,048,576-byte limit of one message]" in result.error
    assert saved == []
    after = await asyncio.wait_for(box.run("del big\nprint(small)"), 30)
    assert after.error is None and after.restarted is None, after.error
    assert after.stdout == "1\n"
    assert [sorted(s["variables"]) for s in saved] == [["small"]]  # sent again once it fits


def test_the_snapshot_keeps_variables_within_its_total() -> None:
    ns: dict[str, Any] = {"a": b"a" * 600, "b": b"b" * 600, "c": b"c" * 10}
    state = SessionState(ns)
    snap = state.snapshot(total=1000)
    assert snap is not None
    assert sorted(snap["variables"]) == ["a", "c"]
    reason = snap["not_saved"]["b"]["reason"]
    assert reason.startswith("pickled size 6") and "the snapshot's 1,000-byte total" in reason
