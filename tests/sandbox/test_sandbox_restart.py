"""Interrupts, crashes and restarts of the real child, with helpers and variables restored."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

from vis_core.sandbox import Sandbox
from vis_core.system.loops import running_loop

from .conftest import HostTools, MakeSandbox

RUNNING = "await echo('running')\n"  # the block tells the host it runs


async def _run_then_interrupt(
    box: Sandbox, tools: HostTools, code: str, marker: str = "started"
) -> Any:
    """Start ``code`` (which prints ``marker`` first, then calls ``echo('running')``), wait
    until it runs, then interrupt."""
    await box.run("pass")  # the child is up, so the interrupt meets a running block
    task = asyncio.create_task(box.run(f"print({marker!r}, flush=True)\n{code}"))
    await tools.called("running")
    await box.interrupt()  # it answers once the block stopped, or its child was killed
    return await task


async def test_busy_loop_is_interrupted_and_the_namespace_survives(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    await sandbox.run("kept = 'yes'")
    result = await _run_then_interrupt(sandbox, host_tools, RUNNING + "while True:\n    pass\n")
    assert result.stdout == "started\n"
    assert result.error is not None and result.error.rstrip().endswith("KeyboardInterrupt")
    assert 'File "<block 3>"' in result.error
    after = await sandbox.run("print(kept)")
    assert after.stdout == "yes\n" and after.error is None and after.restarted is None


async def test_awaiting_block_is_interrupted(sandbox: Sandbox, host_tools: HostTools) -> None:
    code = RUNNING + "import asyncio\nawait asyncio.sleep(60)\n"
    result = await _run_then_interrupt(sandbox, host_tools, code)
    assert result.error is not None and result.error.rstrip().endswith("KeyboardInterrupt")
    assert (await sandbox.run("print(1 + 1)")).stdout == "2\n"


async def test_block_waiting_on_a_host_tool_is_interrupted(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    code = RUNNING + "await gate(99)\n"  # the gate never opens
    result = await _run_then_interrupt(sandbox, host_tools, code)
    assert result.error is not None and result.error.rstrip().endswith("KeyboardInterrupt")
    assert (await sandbox.run("print('next')")).stdout == "next\n"


async def test_block_that_ignores_the_interrupt_is_killed_and_restarted(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    await sandbox.run("def helper():\n    '''Say hi.'''\n    return 'hi'\nsaved = [1, 2]")
    stubborn = (  # says it runs from inside the try: the interrupt is always ignored, also
        # when it comes while the block still awaits that call (it then cancels the block)
        "import asyncio, time\nsaid = False\nwhile True:\n    try:\n"
        "        if not said:\n            said = True\n            await echo('running')\n"
        "        time.sleep(0.01)\n"
        "    except (KeyboardInterrupt, asyncio.CancelledError):\n"
        "        print('ignored', flush=True)\n"
    )
    result = await _run_then_interrupt(sandbox, host_tools, stubborn)
    assert "ignored" in result.stdout
    assert result.error is not None
    assert "The sandbox process died during this block" in result.error
    assert "did not stop within 1 s of the interrupt" in result.error
    after = await sandbox.run("print(helper(), saved)")
    assert after.error is None, after.error
    assert after.stdout == "hi [1, 2]\n"
    assert after.restarted is not None
    assert after.restarted.startswith("The sandbox process was killed because")
    assert "helpers helper" in after.restarted and "variables saved" in after.restarted


async def test_crash_reports_exit_code_and_next_block_restarts(sandbox: Sandbox) -> None:
    await sandbox.run(
        "import json\nclass Point:\n    def __init__(self, x):\n        self.x = x\n"
        "p = Point(7)\ndata = {'k': (1, 2)}\n"
    )
    crash = await sandbox.run("print('before', flush=True)\nimport os\nos._exit(1)\n")
    assert crash.stdout == "before\n"
    assert crash.error is not None
    assert crash.error.startswith(
        "The sandbox process died during this block: it exited with code 1"
    )
    after = await sandbox.run("print(p.x, data, json.dumps([1]))")
    assert after.error is None, after.error
    assert after.stdout == "7 {'k': (1, 2)} [1]\n"
    assert after.restarted is not None
    assert after.restarted.startswith(
        "The sandbox process exited with code 1 and was restarted; "
        "variables were restored from the last snapshot:"
    )


async def test_state_is_restored_after_the_child_is_killed(sandbox: Sandbox) -> None:
    await sandbox.run(
        "def area(w, h=2):\n    '''Area of a box.'''\n    return w * h\n"
        "async def twice(x):\n    return 2 * x\n"
        "sizes = {'a': 3}\nimport sqlite3\nconn = sqlite3.connect(':memory:')\n"
    )
    proc = sandbox._proc
    assert proc is not None
    proc.kill()
    await proc.wait()
    after = await sandbox.run("print(area(sizes['a']), await twice(4))\nprint('conn' in dir())")
    assert after.error is None, after.error
    assert after.stdout == "6 8\nFalse\n"
    assert after.restarted is not None
    assert "was killed (SIGKILL)" in after.restarted
    assert "Lost because they could not be saved: conn" in after.restarted


async def test_a_new_sandbox_resumes_from_the_saved_snapshot(make_sandbox: MakeSandbox) -> None:
    store: dict[str, Any] = {}
    first = make_sandbox(
        snapshot_save=lambda data: store.update(snap=data), snapshot_load=lambda: store.get("snap")
    )
    await first.run("def greet(name):\n    return f'hello {name}'\nwho = 'vis'\ngone = 1")
    await first.run("del gone")
    await first.close()
    assert [h["name"] for h in store["snap"]["helpers"]] == ["greet"]
    assert set(store["snap"]["variables"]) == {"who"}

    second = make_sandbox(snapshot_load=lambda: store.get("snap"))
    result = await second.run("print(greet(who))\nprint('gone' in dir())\nprint(defs())")
    assert result.error is None, result.error
    assert result.stdout.startswith("hello vis\nFalse\n")
    assert "greet(name)  [restored]" in result.stdout
    assert result.restarted is not None
    assert result.restarted.startswith("A new sandbox process started; variables were restored")


async def test_the_snapshot_is_saved_and_loaded_off_the_loop(make_sandbox: MakeSandbox) -> None:
    """A snapshot is up to 64 MB of pickles written to and read from the store as JSON:
    after a block, and at a child's start, that froze keys and drawing on the loop."""
    store: dict[str, Any] = {}
    on_loop: list[str] = []

    def save(data: dict[str, Any]) -> None:
        on_loop.extend(["save"] if running_loop() is not None else [])
        store["snap"] = data

    def load() -> dict[str, Any] | None:
        on_loop.extend(["load"] if running_loop() is not None else [])
        return store.get("snap")

    first = make_sandbox(snapshot_save=save, snapshot_load=load)
    await first.run("kept = 7")
    await first.close()
    assert "kept" in store["snap"]["variables"]
    second = make_sandbox(snapshot_load=load)
    result = await second.run("print(kept)")
    assert result.stdout == "7\n", result.error
    assert on_loop == []


async def test_snapshot_is_saved_only_when_it_changes(make_sandbox: MakeSandbox) -> None:
    saved: list[dict[str, Any]] = []
    box = make_sandbox(snapshot_save=saved.append)
    await box.run("a = 1")
    await box.run("print(a)")
    await box.run("a = 2")
    assert len(saved) == 2
    assert saved[0]["variables"]["a"]["type"] == "int"


async def test_redefinition_replaces_the_saved_helper(make_sandbox: MakeSandbox) -> None:
    saved: list[dict[str, Any]] = []
    box = make_sandbox(snapshot_save=saved.append)
    await box.run("def f():\n    return 1\n")
    await box.run("def f():\n    return 2\n")
    assert [h["source"] for h in saved[-1]["helpers"]] == ["def f():\n    return 2\n"]
    await box.run("f = 'now a string'")
    assert saved[-1]["helpers"] == [] and "f" in saved[-1]["variables"]


async def test_close_then_run_starts_fresh(sandbox: Sandbox) -> None:
    await sandbox.run("x = 1")
    await sandbox.close()
    result = await sandbox.run("print('x' in dir())")
    assert result.error is None
    assert result.stdout == "True\n"  # restored from the in-memory snapshot


async def test_cancelling_run_stops_the_block(sandbox: Sandbox, host_tools: HostTools) -> None:
    await sandbox.run("kept = 5")
    task = asyncio.create_task(sandbox.run(RUNNING + "while True:\n    pass\n"))
    await host_tools.called("running")
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    after = await sandbox.run("print(kept)")
    assert after.stdout == "5\n" and after.error is None


async def test_interrupt_while_the_child_starts(sandbox: Sandbox, workspace: Any) -> None:
    marker = workspace / "ran.txt"
    task = asyncio.create_task(sandbox.run(f"open({str(marker)!r}, 'w').write('x')"))
    await asyncio.sleep(0)  # run() holds the lock and is starting the child
    await sandbox.interrupt()
    result = await task
    assert result.error == "KeyboardInterrupt: the block was interrupted before it started"
    assert not marker.exists()
    assert (await sandbox.run("print('ok')")).stdout == "ok\n"


async def test_failing_snapshot_save_keeps_the_block_result(make_sandbox: MakeSandbox) -> None:
    def broken(data: dict[str, Any]) -> None:
        raise OSError("disk full")

    box = make_sandbox(snapshot_save=broken)
    result = await box.run("value = 1\nprint('printed')")
    assert result.stdout == "printed\n"
    assert result.error == "[vis: saving helpers and variables failed: OSError: disk full]"


async def test_decorated_helpers_and_aliases_survive_a_crash(sandbox: Sandbox) -> None:
    await sandbox.run(
        "import functools\n@functools.lru_cache(maxsize=None)\ndef square(n):\n    return n * n\n"
        "alias = square\nstatus = git.status\n"
    )
    await sandbox.run("import os\nos._exit(2)")
    after = await sandbox.run("print(square(4), alias(5), status)")
    assert after.error is None, after.error
    assert after.stdout == "16 25 <tool git.status>\n"
    assert after.restarted is not None and "helpers square" in after.restarted


async def test_idle_child_is_stopped_and_the_next_block_restores_it(
    make_sandbox: MakeSandbox,
) -> None:
    box = make_sandbox(idle_timeout=0.3)
    await box.run("def double(n):\n    '''Twice n.'''\n    return 2 * n\nkept = 21")
    first_pid = box._pid
    deadline = asyncio.get_running_loop().time() + 10
    while box._alive() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert not box._alive()  # stopped while idle

    after = await box.run("print(double(kept))")
    assert after.error is None and after.stdout == "42\n"
    assert after.restarted is not None
    assert after.restarted.startswith("The sandbox process was stopped after 0.3 s without a block")
    assert "helpers double" in after.restarted
    assert box._pid != first_pid


async def test_a_busy_child_is_not_stopped_for_idleness(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox(idle_timeout=0.2)
    await box.run("pass")
    result = await box.run("import time\ntime.sleep(0.6)\nprint('still here')")
    assert result.stdout == "still here\n" and result.error is None and result.restarted is None


async def test_a_child_whose_start_was_cancelled_is_ended_before_the_next_one_starts(
    make_sandbox: MakeSandbox,
) -> None:
    """A cancel (Esc) that lands while the child starts, after it exists and before it says it
    runs: the next block's start ends that child instead of leaving it beside the new one."""
    loading, go_on = threading.Event(), threading.Event()

    def load() -> None:  # the start reads the snapshot once the child exists
        loading.set()
        go_on.wait(20)

    box = make_sandbox(snapshot_load=load)
    starting = box.prepare()
    assert starting is not None
    await asyncio.to_thread(loading.wait, 20)
    first, held = box._proc, box._stdin  # held: its pipe is not closed by the collector
    assert first is not None and first.running and held is not None
    starting.cancel()
    go_on.set()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    result = await box.run("print('next')")
    assert result.stdout == "next\n", result.error
    assert box._proc is not first
    assert not first.running  # ended, not left running
    assert result.restarted is None  # the person cancelled it: no restart to tell of
