"""The callbacks of a declaration (prompt, activation, ctx, on_change, Activity render) run in
the session's extension worker, with its environment, and one that raises or hangs fails alone."""

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

from vis_core.events import ActivityEnded, BlockFinished, Event
from vis_core.host import Host, HostOptions

WHERE = '''
import asyncio
import json
import os
from pathlib import Path

import vis_core.extension as vis

LOG = Path(os.environ["VIS_HOME"]) / "where.jsonl"


def _seen(what: str) -> dict:
    row = {"what": what, "pid": os.getpid(), "key": os.environ.get("ANTHROPIC_API_KEY")}
    with LOG.open("a") as out:
        out.write(json.dumps(row) + "\\n")
    return row


def _prompt(env: dict) -> str:
    row = _seen("prompt")
    return f"Prompt from pid {row['pid']} key {row['key']}."


def _activation(env: dict) -> bool:
    _seen("activation")
    return True


def _ctx(env: dict) -> dict:
    return {"where": _seen("ctx")}


def _changed(old, new, scope) -> None:
    from vis_core.extension.context import current_call

    _seen(f"on_change {old}->{new} at {scope} for {current_call().session_id}")


def _render(*, phase, args, kwargs, result, error):
    _seen(f"render phase {type(phase).__name__}")
    row = _seen(f"render {phase}")
    return vis.ActivityPresentation("Where", f"drawn in {row['pid']} key {row['key']}")


def where() -> int:
    """The worker's pid."""
    return os.getpid()


vis.register_extension(vis.Extension(
    name="where", alias="where", description="Says where its callbacks run.",
    prompt=_prompt, activation=_activation, ctx=_ctx,
    settings=[vis.Setting(
        id="where_level", label="Level", type="enum", default="low", choices=["low", "high"],
        scopes=["global", "session"], on_change=_changed,
    )],
    slash_commands=[vis.SlashCommand("where", lambda ctx: str(_seen("command")["pid"]))],
    symbols=[vis.Symbol(where, activity=vis.Activity("Where", render=_render, show_start=False))],
))
'''


def _install(name: str, source: str) -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")


def _rows() -> list[dict[str, Any]]:
    path = Path(os.environ["VIS_HOME"]) / "where.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _script(path: Path, blocks: list[str]) -> Path:
    turns = [{"code": textwrap.dedent(b)} for b in blocks] + [{"text": "done"}]
    path.write_text(yaml.safe_dump(turns * 3), encoding="utf-8")
    return path


async def test_callbacks_run_in_the_session_worker_never_in_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-only")
    _install("where", WHERE)
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = "import json\nprint(json.dumps({'pid': await where(), 'ctx': session['where']}))"
    script = _script(tmp_path / "script.yaml", [code])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("go")
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        printed = json.loads(block.stdout.strip().splitlines()[-1])
        worker = host.registry.extension_workers[session.id].worker_for("where")
        pid = worker.pid
        assert pid is not None and pid != os.getpid() and printed["pid"] == pid
        assert printed["ctx"] == {"what": "ctx", "pid": pid, "key": None}
        (ended,) = [e.activity for e in events if isinstance(e, ActivityEnded)]
        assert ended.presentation.summary == f"drawn in {pid} key None"
        system = (await session.next_request()).system
        assert f"Prompt from pid {pid} key None." in system

        result = await host.settings.set("where_level", "high", "session", session_id=session.id)
        assert result.hook_error is None
        rows = _rows()
        kinds = {row["what"] for row in rows}
        assert {"prompt", "activation", "ctx", "render success"} <= kinds
        assert "render phase RenderPhase" in kinds  # a closed set, equal to its string
        assert f"on_change low->high at session for {session.id}" in kinds

        # a global value saved with no session: in the live worker, as a call of no session
        saved = await host.settings.set("where_level", "high", "global")
        assert saved.hook_error is None
        assert "on_change low->high at global for None" in {row["what"] for row in _rows()}
        assert all(row["pid"] == pid and row["key"] is None for row in _rows()), _rows()
    finally:
        await host.close()


async def test_on_change_and_commands_with_no_session_run_in_a_short_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-only")
    _install("where", WHERE)
    workspace = tmp_path / "work"
    workspace.mkdir()
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        assert not host.registry.extension_workers
        result = await host.settings.set("where_level", "high", "global")
        assert result.hook_error is None
        (row,) = [row for row in _rows() if row["what"].startswith("on_change")]
        assert row["what"] == "on_change low->high at global for None"
        assert row["pid"] != os.getpid() and row["key"] is None
        assert not alive(row["pid"])  # started for this one call and stopped after it

        result = await host.commands.run(None, "/where")  # a slash command of no session too
        (row,) = [row for row in _rows() if row["what"] == "command"]
        assert result.title == str(row["pid"]) and row["pid"] != os.getpid()
        assert row["key"] is None and not alive(row["pid"])
    finally:
        await host.close()


# a callback busy in pure Python (it ignores the cancel and holds the GIL of the worker the
# others run in), or one that waits forever in a worker of its own (a busy loop there would
# only burn a core: the others' worker does not share its GIL)
BUSY = "    while True:\n        pass\n"
WAITS = "    import threading\n    threading.Event().wait()\n"


async def _ended(pid: int) -> None:
    """Until process ``pid`` (a child of this one) has ended: its pidfd reads then."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # ended and reaped already
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    loop.add_reader(fd, done.set_result, None)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)


@pytest.mark.parametrize(
    ("hang_env", "hang"), [([], BUSY), (["HANG_TOKEN"], WAITS)], ids=["one worker", "own worker"]
)
async def test_a_callback_that_raises_or_hangs_fails_alone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    hang_env: list[str],
    hang: str,
) -> None:
    """Also when the hanging extension declares its own env: its worker is another process,
    the batch spans two workers, and the others' outcomes do not wait on it. The hung call is
    cancelled; as it ignores its cancel, its worker is killed after the grace and the next
    request starts it again (without the cancel it stayed hung, and its extension with it)."""
    monkeypatch.setenv("HANG_TOKEN", "hang-value")
    _install("where", WHERE)
    _install(
        "raises",
        "import vis_core.extension as vis\n"
        "def _raise(env):\n    raise RuntimeError('prompt broke')\n"
        "vis.register_extension(vis.Extension(name='raises', description='Raises.',"
        " prompt=_raise))\n",
    )
    _install(
        "hangs",
        "import vis_core.extension as vis\n"
        f"def _hang(env):\n{hang}"
        "vis.register_extension(vis.Extension(name='hangs', description='Hangs.',"
        f" env={hang_env!r}, prompt=_hang))\n",
    )
    workspace = tmp_path / "work"
    workspace.mkdir()
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        session = await host.new_session()
        workers = host.registry.extension_workers[session.id]
        workers.times.callback_timeout, workers.times.cancel_grace = 0.5, 0.2
        with caplog.at_level(logging.WARNING):
            system = (await session.next_request()).system
            assert "### raises\nRaises." in system and "### hangs\nHangs." in system
            assert "Prompt from pid" in system  # the others keep their prompt
            assert "prompt callback of extension 'raises' failed" in caplog.text
            assert "prompt broke" in caplog.text
            assert "prompt callback of extension 'hangs' failed" in caplog.text
            assert "did not answer within 0.5 s" in caplog.text
            pid, hung = workers.worker_for("where").pid, workers.worker_for("hangs").pid
            assert pid is not None and hung is not None and (hung == pid) == (not hang_env)
            await asyncio.wait_for(_ended(hung), 60)  # without the cancel: never
            assert (
                "did not stop the prompt callback of extension 'hangs' within 0.2 s of its "
                "cancel; it is restarted" in caplog.text
            )
        again = (await session.next_request()).system
        assert "Prompt from pid" in again and "### hangs\nHangs." in again
        assert workers.worker_for("hangs").pid not in (None, hung)  # started again
        assert (workers.worker_for("where").pid == pid) == bool(hang_env)  # its own: untouched
    finally:
        await host.close()


async def test_the_worker_starts_when_the_session_opens_if_requests_call_into_it(
    tmp_path: Path,
) -> None:
    _install("where", WHERE)
    workspace = tmp_path / "work"
    workspace.mkdir()
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        session = await host.new_session()
        worker = host.registry.extension_workers[session.id].worker_for("where")
        for _ in range(600):  # started in the background, before any request asked for it
            if worker.pid is not None and worker.ready:
                break
            await asyncio.sleep(0.05)
        assert worker.pid is not None and alive(worker.pid)
        assert not _rows()  # nothing of the extension ran yet: the worker only loaded it
        first = worker.pid
        await host.reload()  # stops it, and starts the next one in the background again
        assert not alive(first)
        for _ in range(600):
            if worker.pid not in (None, first) and worker.ready:
                break
            await asyncio.sleep(0.05)
        pid = worker.pid
        assert pid is not None and pid != first and alive(pid)
        await session.close()
        assert not alive(pid)

        closed_at_once = await host.new_session()
        early = host.registry.extension_workers[closed_at_once.id].worker_for("where")
        await closed_at_once.close()  # before its background start: none starts after
        await asyncio.sleep(1.0)
        assert early.pid is None or not alive(early.pid)
    finally:
        await host.close()


NOTIFIER = """
import vis_core.extension as vis


def _prompt(env):
    vis.notify("the prompt was built", "info")  # served by the host on its event loop
    return "Notifier prompt."


vis.register_extension(vis.Extension(name="notifier", description="Notifies.", prompt=_prompt))
"""


async def test_a_prompt_callback_can_call_back_into_vis_while_the_request_is_built(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from vis_core.events import Notification

    _install("notifier", NOTIFIER)
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        with caplog.at_level(logging.WARNING):
            await session.submit("go")
        # the request is built off the event loop, so the loop serves the callback's call
        assert any(isinstance(e, Notification) and "prompt was built" in e.text for e in events)
        assert "prompt callback of extension 'notifier' failed" not in caplog.text
    finally:
        await host.close()


ITEMS = '''
from dataclasses import dataclass

import vis_core.extension as vis


@dataclass
class Item:
    text: str
    done: bool = False


def make(text: str) -> Item:
    """A new item."""
    return Item(text)


def take(item: Item) -> str:
    """The class the argument arrived as."""
    return f"{type(item).__module__.startswith('vis_ext')} {type(item).__name__} {item.text}"


def _broken(**what):
    raise RuntimeError("draw broke")


def take_any(item) -> str:
    """The class an unannotated argument arrived as."""
    return f"{type(item).__name__} {item.text}"


vis.register_extension(vis.Extension(
    name="items", alias="items", description="Items.",
    symbols=[
        vis.Symbol(make, activity=vis.Activity("Make", render=_broken, show_start=False)),
        *[vis.Symbol(f) for f in (take, take_any)],
    ],
))
'''


async def test_records_from_the_sandbox_are_rebuilt_as_the_tools_classes_in_the_worker(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _install("items", ITEMS)
    workspace = tmp_path / "work"
    workspace.mkdir()
    code = (
        "item = await make('ship it')\n"
        "print(type(item).__name__, '|', await take(item), '|', await take_any(item))"
    )
    script = _script(tmp_path / "script.yaml", [code])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        with caplog.at_level(logging.WARNING):
            await session.submit("go")
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        assert block.stdout.strip() == "Item | True Item ship it | Item ship it"
        # a render that raises (drawn in the worker with the call) leaves the result alone
        assert "render callback of make failed in phase success" in caplog.text
        assert "RuntimeError: draw broke" in caplog.text
        ended = [e.activity for e in events if isinstance(e, ActivityEnded)]
        assert [a.tool for a in ended][0] == "make"
    finally:
        await host.close()
