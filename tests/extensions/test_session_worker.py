"""The session's extension worker: tools run in it with their own environment, SDK services
reach the host, each worker fault stays in the worker, `/reload` and closing stop it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from processes import alive

from vis_core.events import ActivityEnded, ActivityUpdated, BlockFinished, Event, Notification
from vis_core.extension.logs import log_file
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityState

PROBE = '''
import asyncio
import os
import sys
import time

import vis_core.extension as vis


def probe() -> dict:
    """Where and with what the tool runs."""
    vis.state["calls"] = vis.state.get("calls", 0) + 1
    vis.notify("probed", "success")
    vis.publish_activity(vis.ActivityPresentation("Probe", "looked around"))
    return {
        "pid": os.getpid(),
        "api_key": os.environ.get("ANTHROPIC_API_KEY"),
        "declared": os.environ.get("PROBE_TOKEN"),
        "calls": vis.state["calls"],
        "root": str(vis.workspace_root()),
        "version": VERSION,
    }


def spin() -> str:
    """Loop until cancelled, asking the host each round (the SDK call after the cancel raises
    in it; a loop that never calls the SDK is deaf, below)."""
    vis.publish_activity(vis.ActivityPresentation("Spin", "running"))
    while True:
        vis.state.get("spins")


async def wait_async() -> str:
    """Wait on the event loop until cancelled."""
    vis.publish_activity(vis.ActivityPresentation("Wait", "running"))
    await asyncio.sleep(600)
    return "never"


def deaf() -> str:
    """Block, deaf to the cancel: the worker is killed and restarted."""
    published = False
    while True:
        try:  # swallows the cancel an SDK call raises
            if not published:
                published = True
                vis.publish_activity(vis.ActivityPresentation("Deaf", "running"))
            time.sleep(600)
        except BaseException:
            continue


def hard_exit() -> str:
    """End the worker process."""
    os._exit(3)


def crash() -> str:
    """Crash the worker process (a null pointer read)."""
    import ctypes

    return str(ctypes.string_at(0))


def soft_exit() -> str:
    """sys.exit inside a tool: only the call fails."""
    sys.exit(2)


VERSION = 1

vis.register_extension(vis.Extension(
    name="probe", alias="probe", description="Probes its worker.", env=["PROBE_TOKEN"],
    symbols=[vis.Symbol(f) for f in (probe, spin, wait_async, deaf, hard_exit, crash, soft_exit)],
))
'''


def _install(version: int = 1) -> Path:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe.py"
    path.write_text(PROBE.replace("VERSION = 1", f"VERSION = {version}"), encoding="utf-8")
    return path


def _script(path: Path, blocks: list[str]) -> Path:
    turns = [{"code": textwrap.dedent(b)} for b in blocks] + [{"text": "done"}]
    path.write_text(yaml.safe_dump(turns * 6), encoding="utf-8")
    return path


PRINT_PROBE = "import json\nprint(json.dumps(dict(await probe())))"


async def _turn(session: Any) -> list[Event]:
    events: list[Event] = []
    session.subscribe(events.append)
    await session.submit("go")
    return events


def _printed(events: list[Event]) -> dict[str, Any]:
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    return json.loads(block.stdout.strip().splitlines()[-1])


def _error(events: list[Event]) -> str:
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is not None
    return block.error


async def test_tools_run_in_the_session_worker_with_only_declared_and_base_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-only")
    monkeypatch.setenv("PROBE_TOKEN", "declared-value")
    _install()
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = _script(tmp_path / "script.yaml", [PRINT_PROBE])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        first = await host.new_session()
        events = await _turn(first)
        seen = _printed(events)
        assert seen["pid"] != os.getpid() and alive(seen["pid"])
        assert seen["api_key"] is None  # nothing of the host's environment but the base
        assert seen["declared"] == "declared-value"  # its declared env reaches it
        assert seen["root"] == str(workspace)
        assert seen["calls"] == 1 and host.store.state_get("probe", "calls") == 1
        assert any(isinstance(e, Notification) and e.text == "probed" for e in events)
        ended = [e.activity for e in events if isinstance(e, ActivityEnded)]
        assert ended[-1].presentation.summary == "looked around"
        assert ended[-1].state is ActivityState.SUCCEEDED

        again = _printed(await _turn(first))
        assert again["pid"] == seen["pid"] and again["calls"] == 2  # one worker per session

        second = await host.new_session()
        other = _printed(await _turn(second))
        assert other["pid"] != seen["pid"]  # each session has its own

        _install(version=2)
        await host.reload()  # /reload stops the workers; the next call loads the new code
        assert not alive(seen["pid"]) and not alive(other["pid"])
        reloaded = _printed(await _turn(first))
        assert reloaded["version"] == 2 and reloaded["pid"] != seen["pid"]
        still = _printed(await _turn(second))["pid"]

        await first.close()  # closing the session stops its worker, not the other's
        assert not alive(reloaded["pid"])
        assert alive(still)
    finally:
        await host.close()
    assert not alive(still)


async def _cancelled_while(session: Any, tool: str) -> list[Event]:
    """Run a turn, cancel it (Esc) once ``tool`` runs in the worker (it published)."""
    events: list[Event] = []
    started = asyncio.Event()

    def watch(event: Event) -> None:
        events.append(event)
        if isinstance(event, ActivityUpdated) and event.activity.tool == tool:
            started.set()

    session.subscribe(watch)
    turn = asyncio.ensure_future(session.submit("go"))
    await started.wait()
    session.cancel()
    await turn
    return events


async def test_a_hung_tool_is_cancelled_and_a_deaf_worker_is_killed_and_restarted(
    tmp_path: Path,
) -> None:
    _install()
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump(
            [{"code": PRINT_PROBE}, {"text": "ok"}]
            + [{"code": "await spin()"}, {"code": PRINT_PROBE}, {"text": "ok"}]
            + [{"code": "await wait_async()"}, {"code": PRINT_PROBE}, {"text": "ok"}]
            + [{"code": "await deaf()"}, {"code": PRINT_PROBE}, {"text": "ok"}]
        ),
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        (worker,) = host.registry.extension_workers.values()
        worker.times.cancel_grace = 0.5
        pid = _printed(await _turn(session))["pid"]

        for tool in ("spin", "wait_async"):  # an SDK call and a coroutine stop on the cancel
            await _cancelled_while(session, tool)
            assert _printed(await _turn(session))["pid"] == pid, tool  # the same worker goes on
            stored = [e.event for e in host.store.events(session.id)]
            cancelled = [e.activity for e in stored if isinstance(e, ActivityEnded)]
            cancelled = [a for a in cancelled if a.tool == tool]
            assert cancelled and cancelled[-1].state is ActivityState.CANCELLED

        await _cancelled_while(session, "deaf")  # deaf to the cancel: killed, then restarted
        fresh = _printed(await _turn(session))["pid"]
        assert fresh != pid and not alive(pid)
    finally:
        await host.close()


async def test_a_tool_that_ends_or_crashes_its_worker_fails_alone(tmp_path: Path) -> None:
    _install()
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    blocks = [PRINT_PROBE, "await soft_exit()", PRINT_PROBE, "await hard_exit()", PRINT_PROBE]
    blocks += ["await crash()", PRINT_PROBE]
    script.write_text(
        yaml.safe_dump([{"code": b} for b in blocks] + [{"text": "done"}]), encoding="utf-8"
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = await _turn(session)
    finally:
        await host.close()
    results = [e for e in events if isinstance(e, BlockFinished)]
    first = _printed(results[0:1])["pid"]
    assert "SystemExit: 2" in str(results[1].error)
    assert _printed(results[2:3])["pid"] == first  # sys.exit ends only the call
    assert "exited with code 3" in str(results[3].error)
    assert "the next call starts a new one" in str(results[3].error)
    second = _printed(results[4:5])["pid"]
    assert second != first
    assert "crashed (SIGSEGV)" in str(results[5].error)
    assert _printed(results[6:7])["pid"] not in (first, second)


GUARD = """
import os

import vis_core.extension as vis


def before(call):
    vis.state["hook_pid"] = os.getpid()
    if "forbidden" in call["args"][0]["code"]:
        return vis.block("forbidden blocks are not allowed", hint="drop it")
    return None


def where(ctx):
    return vis.ok("where", data={"pid": os.getpid(), "key": os.environ.get("ANTHROPIC_API_KEY")})


vis.register_extension(vis.Extension(
    name="guard", description="Guards blocks and says where it runs.",
    op_hooks=[vis.OpHook("python_execution", before)],
    slash_commands=[vis.SlashCommand("where", where)],
))
"""


async def test_op_hooks_and_slash_commands_run_in_the_session_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-only")
    _install()
    (Path(os.environ["VIS_HOME"]) / "extensions" / "guard.py").write_text(GUARD, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    blocks = [{"code": PRINT_PROBE}, {"code": "forbidden = 1"}, {"text": "done"}]
    script.write_text(yaml.safe_dump(blocks), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = await _turn(session)
        results = [e for e in events if isinstance(e, BlockFinished)]
        pid = _printed(results[0:1])["pid"]
        assert "forbidden blocks are not allowed" in str(results[1].error)
        assert host.store.state_get("guard", "hook_pid") == pid  # the hook ran in the worker

        where = await host.commands.run(session, "/where")
        assert where.ok and where.data == {"pid": pid, "key": None}
    finally:
        await host.close()


HANGS = """
import time
import vis_core.extension as vis


def hang(call):
    if call.get("path", "").endswith("slow.txt") or "slow" in str(call.get("args")):
        time.sleep(3600)  # deaf to a cancel: its worker is killed
    return None


vis.register_extension(vis.Extension(
    name="hangs", description="Hangs on anything slow.",
    op_hooks=[vis.OpHook("shell", hang), vis.OpHook("fs_access", hang)],
))
"""


async def test_an_op_hook_that_hangs_is_stopped_and_the_call_goes_on_as_for_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A guard that never answers held the model's call, and every later call into its
    extension, until the block's time limit (30 minutes by default). It is cancelled after
    the hook time limit (its worker killed when it ignores that): a before hook's failure is
    logged and the command runs (as for a hook that raises); an fs_access check that does not
    answer refuses, as one that raises does."""
    (Path(os.environ["VIS_HOME"]) / "extensions").mkdir(parents=True, exist_ok=True)
    (Path(os.environ["VIS_HOME"]) / "extensions" / "hangs.py").write_text(HANGS)
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "slow.txt").write_text("never read\n")
    code = (
        "h = await shell('echo slow-but-ran')\nprint((await h.wait(30)).output.strip())\n"
        "try:\n    await cat('slow.txt')\nexcept Exception as exc:\n    print('refused:', exc)\n"
        "h = await shell('echo quick')\nprint((await h.wait(30)).output.strip())"
    )
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        workers = host.registry.extension_workers[session.id]
        workers.times.hook_timeout, workers.times.cancel_grace = 1.0, 0.5
        with caplog.at_level(logging.WARNING):
            (result,) = [e for e in await _turn(session) if isinstance(e, BlockFinished)]
    finally:
        await host.close()
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "slow-but-ran",
        "refused: file-read of "
        f"{workspace / 'slow.txt'} was refused by extension 'hangs': its fs_access hook did "
        "not answer within 1 s; it was cancelled",
        "quick",  # a fresh worker answers the next call
    ]
    logged = log_file().read_text(encoding="utf-8")  # once, as the extension's failed hook
    assert logged.count("[hangs] before hook for shell failed; the operation went on") == 1
    assert "TimeoutError: its shell hook did not answer within 1 s; it was cancelled" in logged
    assert "did not answer in time" not in caplog.text  # not said again by Vis


SLOW_START = """
import os, time
import vis_core.extension as vis

if os.path.exists({marker!r}):  # a worker that takes long to start, as on a loaded machine
    time.sleep(1.5)


def guard(call):
    if "hang" in str(call.get("args")):
        time.sleep(3600)  # deaf to a cancel: its worker is killed, and the next one is slow
    return None


vis.register_extension(vis.Extension(
    name="slowstart", description="Starts slowly.", op_hooks=[vis.OpHook("shell", guard)],
))
"""


async def test_a_hooks_time_limit_counts_from_its_workers_start_not_before(
    tmp_path: Path,
) -> None:
    """The hook time limit is for the hook: a worker that took longer than it to start (a
    loaded machine, an extension slow to import) failed the next hook as "did not answer"
    though the hook itself answered at once."""
    marker = tmp_path / "slow"
    extensions = Path(os.environ["VIS_HOME"]) / "extensions"
    extensions.mkdir(parents=True, exist_ok=True)
    (extensions / "slowstart.py").write_text(SLOW_START.format(marker=str(marker)))
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = (
        "for command in ('echo first', 'echo hang', 'echo after'):\n"
        "    print((await (await shell(command)).wait(30)).output.strip())"
    )
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        marker.touch()  # each session worker's start takes 1.5 s, more than the hook's 1 s
        session = await host.new_session()
        workers = host.registry.extension_workers[session.id]
        workers.times.hook_timeout, workers.times.cancel_grace = 1.0, 0.5
        (result,) = [e for e in await _turn(session) if isinstance(e, BlockFinished)]
    finally:
        await host.close()
    assert result.error is None, result.error
    assert result.stdout.splitlines() == ["first", "hang", "after"]
    logged = log_file().read_text(encoding="utf-8")  # only the hook that hung failed
    assert logged.count("[slowstart] before hook for shell failed") == 1, logged


ASKER = '''
import vis_core.extension as vis


def job() -> str:
    """Ask who runs it, then show the build as a live view."""
    answer = vis.ask("Sign in", [vis.plaintext("user")])
    with vis.live("Build", [vis.status("s", "start")]) as view:
        view.close(summary="built")
    return f"{answer['user']} built it"


vis.register_extension(vis.Extension(
    name="asker", alias="asker", description="Asks and shows.", symbols=[vis.Symbol(job)],
))
'''


class _Filler:
    async def present(self, request: Any) -> dict[str, Any]:
        return {"user": "ann"}


async def test_forms_and_live_views_work_from_the_worker(tmp_path: Path) -> None:
    from vis_core.events import FormAnswered, LiveClosed, LiveOpened

    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "asker.py").write_text(ASKER, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump([{"code": "print(await job())"}, {"text": "done"}]), encoding="utf-8"
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        host.interaction.add_presenter(_Filler())
        session = await host.new_session()
        events = await _turn(session)
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None and block.stdout.strip() == "ann built it"
        kinds = {type(s.event) for s in host.store.events(session.id)}
        assert {FormAnswered, LiveOpened, LiveClosed} <= kinds
    finally:
        await host.close()


WAITER = '''
import vis_core.extension as vis


def wait_on(placement: str, seconds: float) -> str:
    """Wait for a press on a view no one presses: its events end after ``seconds``."""
    key = "job" if placement == "panel" else None
    view = vis.live("Job", [vis.button("go", "Go")], placement=placement, key=key)
    pressed = [event.kind for event in view.events(timeout=seconds)]
    return f"{placement} ended after {len(pressed)} events"


def first_of_none() -> str:
    """Raise StopIteration: ``next()`` of an empty iterator."""
    return next(iter(()))


vis.register_extension(vis.Extension(
    name="waiter", alias="waiter", description="Waits.",
    symbols=[vis.Symbol(wait_on), vis.Symbol(first_of_none)],
))
'''


async def test_events_of_a_view_end_in_the_worker_when_their_timeout_passes(
    tmp_path: Path,
) -> None:
    """The end of the host's iterator used to be raised into a Future on the host's loop
    (StopIteration cannot be): the worker's ``for`` waited forever."""
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "waiter.py").write_text(WAITER, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = "print(await wait_on('inline', 0.01))\nprint(await wait_on('panel', 0.01))"
    script = _script(tmp_path / "script.yaml", [code])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = await asyncio.wait_for(_turn(session), 120)  # a hang fails, late
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        assert block.stdout.splitlines() == [
            "inline ended after 0 events",
            "panel ended after 0 events",
        ]
    finally:
        await host.close()


async def test_a_tool_that_raises_stop_iteration_fails_its_call(tmp_path: Path) -> None:
    """Its StopIteration crossed as itself into the Future the host's loop awaited: asyncio
    refused it (TypeError in the channel's reader) and the call waited forever."""
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "waiter.py").write_text(WAITER, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = _script(tmp_path / "script.yaml", ["print(await first_of_none())"])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = await asyncio.wait_for(_turn(session), 120)  # a hang fails, late
        assert "StopIteration" in _error(events)
        (ended,) = [e.activity for e in events if isinstance(e, ActivityEnded)]
        assert ended.state is ActivityState.FAILED
    finally:
        await host.close()


async def test_objects_lent_to_the_worker_are_let_go_when_it_drops_them(tmp_path: Path) -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "asker.py").write_text(ASKER, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    code = "for _ in range(30):\n    said = await job()\nprint(said)"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        host.interaction.add_presenter(_Filler())
        session = await host.new_session()
        events = await _turn(session)
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None and block.stdout.strip() == "ann built it"
        # each job borrowed a live view and its methods; the worker dropped them all
        channel = host.registry.extension_workers[session.id].worker_for("asker")._channel
        assert channel is not None
        assert len(channel.exports) <= 3
    finally:
        await host.close()


SHELLER = '''
import vis_core.extension as vis


def jailed_child(outside: str) -> str:
    """A child under the session's jail: it sees the project's values, not the world."""
    child = vis.jailed_shell(f"echo name=$PROJECT_NAME key=$ANTHROPIC_API_KEY; touch {outside}")
    child.wait(30)
    return child.logs().strip()


def env_of_child() -> str:
    """What a child started with vis.shell sees of the environment."""
    child = vis.shell("echo key=$ANTHROPIC_API_KEY token=$PROBE_TOKEN")
    child.wait(30)
    return child.logs().strip()


vis.register_extension(vis.Extension(
    name="sheller", alias="sheller", description="Starts a child.", env=["PROBE_TOKEN"],
    symbols=[vis.Symbol(env_of_child), vis.Symbol(jailed_child)],
))
'''


async def test_a_child_of_vis_shell_sees_the_extension_environment_not_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-only")
    monkeypatch.setenv("PROBE_TOKEN", "declared-value")
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sheller.py").write_text(SHELLER, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = _script(tmp_path / "script.yaml", ["print(await env_of_child())"])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        (block,) = [e for e in await _turn(session) if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        assert block.stdout.strip() == "key= token=declared-value"
    finally:
        await host.close()


async def test_vis_jailed_shell_in_the_worker_follows_the_sessions_jail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandbox.hostile import BWRAP_PROBLEM

    from vis_core.paths import TrustStore, VisPaths

    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-only")
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sheller.py").write_text(SHELLER, encoding="utf-8")
    workspace = tmp_path / "work"
    (workspace / ".vis").mkdir(parents=True)
    # only the project's settings switch the jail on: the worker must learn it from the host
    (workspace / ".vis" / "settings.toml").write_text("[settings]\njail = true\n")
    (workspace / "vis.yml").write_text("environment:\n  PROJECT_NAME: acme\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    outside = tmp_path / "outside.txt"
    script = _script(tmp_path / "script.yaml", [f"print(await jailed_child({str(outside)!r}))"])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        assert host.space.jail_policy(session.id) == (True, None)
        (block,) = [e for e in await _turn(session) if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        assert "name=acme key=" in block.stdout
        assert "sk-ant" not in block.stdout
        assert not outside.exists()
    finally:
        await host.close()


async def test_bundled_extensions_run_in_the_session_worker_too(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = "item = await todo.add('ship it')\nprint(item.text, (await todo.list()).items[0].id)"
    script = _script(tmp_path / "script.yaml", [code])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = await _turn(session)
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        assert block.stdout.split() == ["ship", "it", "1"]
        ended = [e.activity for e in events if isinstance(e, ActivityEnded)]
        assert [a.state for a in ended] == [ActivityState.SUCCEEDED] * 2
        worker = host.registry.extension_workers[session.id].worker_for("todo")
        assert worker.pid is not None and worker.pid != os.getpid() and alive(worker.pid)
    finally:
        await host.close()


async def test_esc_also_stops_a_tool_call_the_block_left_running(tmp_path: Path) -> None:
    _install()
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = _script(
        tmp_path / "script.yaml",
        ["import asyncio\nasyncio.ensure_future(wait_async())\nawait asyncio.sleep(600)"],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        (worker,) = host.registry.extension_workers.values()
        worker.times.cancel_grace = 5.0
        events = await _cancelled_while(session, "wait_async")
        for _ in range(200):  # the call's end follows the turn's
            ended = [
                e.event.activity
                for e in host.store.events(session.id)
                if isinstance(e.event, ActivityEnded) and e.event.activity.tool == "wait_async"
            ]
            if ended:
                break
            await asyncio.sleep(0.05)
        assert ended and ended[-1].state is ActivityState.CANCELLED
        assert any(isinstance(e, BlockFinished) for e in events)
    finally:
        await host.close()


PLAIN = '''
import os

import vis_core.extension as vis


def plain_pid() -> int:
    """The pid of the worker this extension runs in."""
    return os.getpid()


vis.register_extension(vis.Extension(
    name="plain", alias="plain", description="Declares no env.", symbols=[vis.Symbol(plain_pid)],
))
'''


async def test_after_reload_a_changed_env_moves_an_extension_to_its_new_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which worker runs an extension is worked out once per load: a /reload that changes
    its declared env sends its next call to the worker of its new environment."""
    monkeypatch.setenv("PROBE_TOKEN", "declared-value")
    path = _install()
    (path.parent / "plain.py").write_text(PLAIN, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = PRINT_PROBE.replace(
        "dict(await probe())", "{**await probe(), 'plain': await plain_pid()}"
    )
    script = _script(tmp_path / "script.yaml", [code])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        before = _printed(await _turn(session))
        assert before["declared"] == "declared-value"
        assert before["pid"] != before["plain"]  # another environment: another worker

        path.write_text(PROBE.replace('env=["PROBE_TOKEN"]', "env=[]"), encoding="utf-8")
        await host.reload()
        after = _printed(await _turn(session))
        assert after["declared"] is None
        assert after["pid"] == after["plain"]  # now it shares the worker of plain
    finally:
        await host.close()


TICKETS = """
import vis_core.extension as vis


def list_tickets(ctx):
    return vis.ok(" ".join(ctx.args))  # a dict: ctx["args"]


def ticket(number: int) -> str:
    \"\"\"The ticket ``number``.\"\"\"
    raise KeyError(f"no ticket #{number}")


async def count(ctx):
    return str(vis.stat.get("count"))  # vis.state


vis.register_extension(vis.Extension(
    name="tickets", alias="tickets", description="Tickets.",
    symbols=[vis.Symbol(ticket)],
    slash_commands=[vis.SlashCommand("tickets", list_tickets), vis.SlashCommand("count", count)],
))
"""


async def test_a_command_or_tool_that_raises_says_where_and_logs_its_traceback(
    tmp_path: Path,
) -> None:
    """An extension's command or tool that raised showed only the exception's class and text,
    in the command's error and nowhere else. The command's error now names the extension's
    file, line and function; the traceback of either is in vis.log; the model's block sees
    the tool's exception as before."""
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tickets.py").write_text(TICKETS, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = "try:\n    await ticket(999)\nexcept KeyError as exc:\n    print(repr(exc))"
    script = _script(tmp_path / "script.yaml", [code])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        failed = await host.commands.run(session, "/tickets")
        typo = await host.commands.run(session, "/count")
        (block,) = [e for e in await _turn(session) if isinstance(e, BlockFinished)]
    finally:
        await host.close()
    assert not failed.ok and failed.title == "/tickets failed"
    assert failed.body == (
        "AttributeError: 'dict' object has no attribute 'args' (tickets.py:6 in list_tickets)"
    )
    assert typo.body == (
        "AttributeError: 'function' object has no attribute 'get' (tickets.py:15 in count)"
    )
    assert block.error is None and "no ticket #999" in block.stdout
    assert "tickets.py" not in block.stdout  # the model sees the exception as before
    logged = log_file().read_text(encoding="utf-8")
    assert "[tickets] /tickets failed: AttributeError:" in logged
    assert (
        "[tickets] tool ticket failed: KeyError: 'no ticket #999' (tickets.py:11 in ticket)"
        in logged
    )
    assert 'tickets.py", line 11, in ticket' in logged  # the traceback
    assert 'tickets.py", line 6, in list_tickets' in logged


WRONG_VERDICT = """
import vis_core.extension as vis


def before(call):
    return False  # meant as "refuse"; a refusal is vis.block(reason)


vis.register_extension(vis.Extension(
    name="nope", description="Means to refuse every block.",
    op_hooks=[vis.OpHook("python_execution", before)],
))
"""


async def test_a_before_hook_that_returns_no_verdict_is_told_once_and_the_block_runs(
    tmp_path: Path,
) -> None:
    """A before hook that returned ``False`` (or a string) let the operation run and said so
    only in vis.log: its author believed it refused. The block still runs (the hook's value
    is ignored), and the person is told once per hook in the session what to return."""
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nope.py").write_text(WRONG_VERDICT, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = _script(tmp_path / "script.yaml", ["print('ran 1')", "print('ran 2')"])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = await _turn(session)
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert [b.stdout.strip() for b in blocks] == ["ran 1", "ran 2"]
    told = [e.text for e in events if isinstance(e, Notification) and "'nope'" in e.text]
    assert told == [
        "Extension 'nope': its before hook for python_execution returned False, which is not a "
        "verdict, so the python_execution went on. Return None to let it go on or "
        "vis.block(reason) to refuse it."
    ]
