"""grep without ripgrep runs the model's pattern where it can be stopped: a backtracking
pattern ends with a named timeout within the block's limit, and Esc ends it at once."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from vis_core.host import Host, HostOptions
from vis_core.sandbox import Sandbox, ToolEntry
from vis_core.tools import ToolContext, builtin_tools
from vis_core.tools.search import WORKER, search

GREP = """
try:
    print(await grep("(a+)+$", "big.txt"))
except Exception as exc:
    print("grep failed:", type(exc).__name__, str(exc).splitlines()[0])
"""


@pytest.fixture
def without_ripgrep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH with every program of the usual folders except ``rg``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for where in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(where):
            continue
        for name in os.listdir(where):
            if name != "rg" and not (folder / name).exists():
                os.symlink(os.path.join(where, name), folder / name)
    monkeypatch.setenv("PATH", str(folder))
    assert shutil.which("rg") is None


def _backtracking_file(workspace: Path) -> None:
    (workspace / "big.txt").write_text("short line\n" + "a" * 64 + "b\n")


def _workers() -> list[int]:
    """Pids of the pattern processes this test process started (its descendants: a test
    running beside it under xdist may have its own)."""
    found, pending = [], [os.getpid()]
    while pending:
        pid = pending.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                children = Path(f"/proc/{pid}/task/{task}/children").read_text()
                pending += [int(child) for child in children.split()]
            cmdline = Path("/proc", str(pid), "cmdline").read_bytes()
        except OSError:
            continue
        if str(WORKER).encode() in cmdline:
            found.append(pid)
    return found


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump([{"code": GREP}, {"text": "Done."}]), encoding="utf-8")
    return path


async def test_a_backtracking_pattern_times_out_within_the_block_limit(
    workspace: Path, tmp_path: Path, vis_home: Path, without_ripgrep: None
) -> None:
    _backtracking_file(workspace)
    limit = 2.0  # the block's time limit; grep gets half of it
    ctx = ToolContext(workspace, "s", tmp_path / "outputs", time_limit=limit)
    grep = next(tool.fn for tool in builtin_tools(ctx) if tool.name == "grep")

    async def call_tool(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert name == "grep"
        return await grep(*args, **kwargs)

    box = Sandbox(
        workspace=workspace,
        call_tool=call_tool,
        tools=lambda: [ToolEntry("grep", "Search files.")],
        time_limit=limit,
    )
    try:
        block = await box.run(GREP)
        after = await box.run("print('the next block runs')")
    finally:
        await box.close()
        await ctx.close()
    assert block.error is None, block.error  # the block itself stayed within its limit
    assert "grep failed: TimeoutError grep: searching for '(a+)+$' took" in block.stdout, (
        block.stdout
    )
    assert "took longer than 1 s" in block.stdout and "block_time_limit" in block.stdout
    assert "the next block runs" in after.stdout
    assert _workers() == []


async def test_cancelling_ends_a_backtracking_search(
    workspace: Path, tmp_path: Path, vis_home: Path, without_ripgrep: None
) -> None:
    _backtracking_file(workspace)
    host = await Host.open(
        HostOptions(workspace=workspace, provider="scripted", script=_script(tmp_path))
    )
    try:
        session = await host.new_session()
        turn = asyncio.ensure_future(session.submit("go"))
        for _ in range(3000):  # until the search has started its pattern's process
            if _workers() or turn.done():
                break
            await asyncio.sleep(0.01)
        assert _workers(), f"the search never started its pattern process: {turn}"
        session.cancel()
        ended = await turn
        assert ended.status == "cancelled"
    finally:
        await host.close()
    assert _workers() == []


async def test_grep_refuses_a_pipe_instead_of_waiting_on_it(ctx: ToolContext, workspace: Path):
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ValueError, match="pipe is not a file or folder"):
        await asyncio.wait_for(search(ctx, "x", "pipe"), 60)  # before: ripgrep waited forever


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
async def test_with_ripgrep_no_pattern_runs_in_python(ctx: ToolContext, workspace: Path):
    """ripgrep counts a file with one matching line; the page's line numbers come from it too,
    so the other line, on which Python's engine backtracks for hours, is never tried there."""
    (workspace / "mixed.txt").write_text("aaaa\n" + "a" * 64 + "b\n")
    found = await asyncio.wait_for(search(ctx, "(a+)+$", "mixed.txt"), 60)
    assert found.startswith("mixed.txt @1\n1: aaaa\n") and "1 matching line in 1 file" in found


async def test_a_glob_with_many_stars_does_not_backtrack(workspace: Path, tmp_path: Path) -> None:
    """Globs become regular expressions: ``*a*a*…b`` backtracked for hours on a long file
    name, in a host thread; now its stars do not backtrack (and it runs in the pattern's
    process, within the time limit)."""
    (workspace / ("a" * 200)).write_text("x\n")
    (workspace / ("y" + "a" * 10 + "b")).write_text("x\n")
    ctx = ToolContext(workspace, "s", tmp_path / "outputs", time_limit=60.0)
    try:
        found = await search(ctx, "x", include="*a*a*a*a*a*a*a*a*a*a*b", engine="python")
    finally:
        await ctx.close()
    assert found.startswith("y" + "a" * 10 + "b @1") and "1 matching line in 1 file" in found
    assert _workers() == []
