"""shell handles: output, waiting, typing into stdin, stopping process trees, timeouts, jail."""

from __future__ import annotations

import asyncio
import gc
import shutil
import signal
import sys
import threading
from pathlib import Path

import pytest
from processes import alive

from vis_core.system.shell import ShellManager, ShellStatus, StreamBuffer
from vis_core.tools import ToolContext


async def test_exit_code_and_both_streams(tools: dict, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    sh = await tools["shell"].fn("pwd; echo oops >&2; exit 3", cwd="sub")
    status = await sh.wait(10)
    assert isinstance(status, ShellStatus)
    assert status.exit_code == 3 and not status.running
    assert status.output == f"{workspace / 'sub'}\noops\n"
    assert ("stderr", "oops") in sh.output_lines()
    assert str(status).startswith(f"$ pwd; echo oops >&2; exit 3\n[exit 3]\n{workspace}/sub")


async def test_a_line_written_in_pieces_is_one_line_of_the_terminal(tools: dict) -> None:
    """A line that reached Vis in two reads was two lines in the Activity's terminal (and in
    a timeout's last output), though ``logs()`` had it whole."""
    sh = await tools["shell"].fn("printf 'got '; sleep 0.3; printf 'hello\\nno end'")
    await sh.wait(10)
    assert sh.logs() == "got hello\nno end"
    assert sh.output_lines() == [("stdout", "got hello"), ("stdout", "no end")]


async def test_type_into_a_process_reading_stdin(tools: dict) -> None:
    sh = await tools["shell"].fn("read name; echo hello $name; read again; echo bye $again")
    await sh.type("vis\n")
    for _ in range(1000):  # up to 20 s: a loaded machine starts processes slowly
        if "hello vis" in sh.logs():
            break
        await asyncio.sleep(0.02)
    assert sh.logs() == "hello vis\n" and sh.running
    await sh.type("now\n")
    status = await sh.wait(10)
    assert status.output == "hello vis\nbye now\n" and status.exit_code == 0
    with pytest.raises(RuntimeError, match="has exited \\(exit 0\\); it cannot read input"):
        await sh.type("more\n")


async def test_stop_ends_the_whole_process_tree(tools: dict, workspace: Path) -> None:
    # the child ignores SIGTERM and starts a grandchild: both must be gone after stop()
    script = "trap '' TERM; sleep 300 & echo $! > grandchild.pid; echo started; wait"
    sh = await tools["shell"].fn(script)
    for _ in range(1000):
        if (workspace / "grandchild.pid").exists() and "started" in sh.logs():
            break
        await asyncio.sleep(0.02)
    grandchild = int((workspace / "grandchild.pid").read_text())
    assert alive(grandchild) and alive(sh.pid)
    status = await sh.stop(grace=0.3)
    assert status.stopped and status.exit_code == -signal.SIGKILL
    assert not alive(sh.pid) and not alive(grandchild)


async def test_wait_raises_a_clear_timeout(tools: dict) -> None:
    sh = await tools["shell"].fn("echo working; sleep 300")
    with pytest.raises(TimeoutError, match=r"(?s)still running after 0.3s.*stop\(\).*working"):
        await sh.wait(0.3)
    await sh.stop()


async def test_timeout_stops_the_command(tools: dict) -> None:
    sh = await tools["shell"].fn("echo begin; sleep 300", timeout=0.3)
    status = await sh.wait(20)
    assert status.timed_out and not status.running
    assert "stopped after its timeout" in str(status) and "begin" in status.output


async def test_session_close_stops_everything(ctx: ToolContext, tools: dict) -> None:
    handles = [await tools["shell"].fn("sleep 300") for _ in range(3)]
    await ctx.close()
    assert all(not h.running for h in handles)
    assert all(not alive(h.pid) for h in handles)


async def test_long_output_keeps_the_tail_and_saves_the_rest(ctx: ToolContext, tools: dict) -> None:
    sh = await tools["shell"].fn("seq 1 5000")
    status = await sh.wait(10)
    assert status.output.rstrip().endswith("\n5000")
    assert "\n3001\n" in status.output and "\n3000\n" not in status.output
    saved = status.output.split("Full output saved to: ", 1)[1].split("]", 1)[0]
    assert Path(saved).read_text().splitlines() == [str(i) for i in range(1, 5001)]
    assert Path(saved).parent == ctx.output_dir


def test_stream_buffer_is_bounded() -> None:
    buffer = StreamBuffer(limit=100)
    for i in range(50):
        buffer.add(i, b"0123456789")
    assert buffer.size == 100 and buffer.dropped == 400
    assert buffer.text() == "0123456789" * 10
    multi = StreamBuffer(limit=10)
    multi.add(0, "é".encode() * 3 + b"\xc3")  # a split character is kept for the next chunk
    multi.add(1, b"\xa9")
    assert multi.text() == "éééé"


async def test_bad_arguments(tools: dict) -> None:
    with pytest.raises(ValueError, match="command must be a non-empty string"):
        await tools["shell"].fn("  ")
    with pytest.raises(NotADirectoryError, match="cwd nope is not a folder"):
        await tools["shell"].fn("ls", cwd="nope")
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        await tools["shell"].fn("ls", timeout=0)
    with pytest.raises(ValueError, match="shell: the command holds a NUL character"):
        await tools["shell"].fn("echo a\0b")  # was "embedded null byte"
    with pytest.raises(ValueError, match="shell: the path 'a\\\\x00b' holds a NUL"):
        await tools["shell"].fn("ls", cwd="a\0b")
    # NaN passed `timeout <= 0` and stopped the command at once; "30" failed comparing str
    for wrong in (float("nan"), "30"):
        with pytest.raises(ValueError, match="shell: timeout must be a positive number of sec"):
            await tools["shell"].fn("ls", timeout=wrong)


async def test_jail_refuses_without_bubblewrap(
    workspace: Path, tmp_path: Path, monkeypatch
) -> None:
    from vis_core.system.jail import JailUnavailable
    from vis_core.tools import builtin_tools

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    ctx = ToolContext(workspace, "s", tmp_path / "o", jail=True)
    shell = {t.name: t for t in builtin_tools(ctx)}["shell"].fn
    with pytest.raises(JailUnavailable, match="will not run it unconfined"):
        await shell("touch ran")
    assert not (workspace / "ran").exists()
    assert ctx.shells.handles == {}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
async def test_jail_confines_commands(workspace: Path, tmp_path: Path) -> None:
    from vis_core.tools import builtin_tools

    ctx = ToolContext(workspace, "s", tmp_path / "o", jail=True)
    shell = {t.name: t for t in builtin_tools(ctx)}["shell"].fn
    (workspace / "sub").mkdir()
    outside = tmp_path / "outside.txt"
    host_file = tmp_path / "host.txt"
    host_file.write_text("host only\n")
    sh = await shell(
        f"pwd; echo inside > in.txt; echo x > {outside}; cat {host_file} || echo hidden",
        cwd="sub",
    )
    status = await sh.wait(30)
    if "bwrap:" in status.output and str(workspace) not in status.output:
        pytest.skip(f"bubblewrap cannot create namespaces here: {status.output.strip()}")
    assert status.output.splitlines()[0] == str(workspace / "sub")
    assert (workspace / "sub" / "in.txt").read_text() == "inside\n"
    # outside the workspace the jail sees a private /tmp: nothing leaks in or out
    assert "hidden" in status.output and "host only" not in status.output
    assert not outside.exists()
    with pytest.raises(PermissionError, match="outside the workspace"):
        await shell("ls", cwd=str(tmp_path))
    await ctx.close()


async def test_wait_zero_on_a_finished_command_returns_its_status(tools: dict) -> None:
    sh = await tools["shell"].fn("echo done; exit 4")
    await sh.wait(None)
    status = await sh.wait(0)  # already finished: no TimeoutError
    assert status.exit_code == 4 and status.output == "done\n"
    with pytest.raises(ValueError, match="wait: seconds must be a number >= 0 of seconds"):
        await sh.wait(float("nan"))  # was: "still running after nans", at once


def test_closed_shells_leave_no_process_to_the_garbage_collector(
    workspace: Path, tmp_path: Path
) -> None:
    """Once the shells are closed, each process they started (the command and its reaper) has
    been waited for and its pipes closed: nothing is left for the garbage collector, which would
    close it by calling into the closed event loop ("Event loop is closed"). Before, close_all
    returned while the reaper's stop still ran: whether it ended first was a race, so the
    test closes several sessions, each in its own loop."""

    async def session(code: int) -> set[asyncio.Task[object]]:
        shells = ShellManager()
        handle = await shells.start(f"exit {code}", cwd=workspace, output_dir=tmp_path)
        assert (await handle.wait(30)).exit_code == code
        await shells.close_all()
        return asyncio.all_tasks() - {asyncio.current_task()}

    unraisable: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}")
    before = set(threading.enumerate())
    try:
        for code in range(1, 6):
            loop = asyncio.new_event_loop()  # closed as a test's loop is: no task is cancelled
            try:
                left = loop.run_until_complete(session(code))
            finally:
                loop.close()
            assert not left, f"still running after close_all: {left}"
        del loop
        for thread in set(threading.enumerate()) - before:  # any a start left behind
            thread.join(5)
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert unraisable == []


async def test_a_wrong_argument_is_named_as_the_model_calls_the_tool(tools: dict) -> None:
    """shell(..., background=True) failed with 'builtin_tools.<locals>.shell() got an
    unexpected keyword argument': Python's own error now names the tool as it is called."""
    with pytest.raises(TypeError) as raised:
        await tools["shell"].fn("sleep 1", background=True)
    assert str(raised.value) == "shell() got an unexpected keyword argument 'background'"
    with pytest.raises(TypeError) as raised:
        await tools["patch"].fn("a.py")
    assert str(raised.value).startswith("patch() missing 2 required positional arguments")
