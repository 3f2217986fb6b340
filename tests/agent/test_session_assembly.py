"""How a session is put together: its event bus first, its tool set, where its calls happen."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
import yaml

from vis_core.agent.deps import SessionDeps, SessionModel
from vis_core.agent.event_bus import EventBus
from vis_core.agent.session import AgentSession
from vis_core.events import (
    ActivityEnded,
    BlockFinished,
    Event,
    IterationStarted,
    Notification,
    TurnStarted,
    UsageReported,
)
from vis_core.host import Host, HostOptions
from vis_core.model.usage import Usage
from vis_core.store import Store

TOOLS = '''
import vis_core.extension as vis


def first_tool() -> str:
    """The first tool."""
    return "first"

EXTRA

vis.register_extension(vis.Extension(
    name="kit", alias="kit", description="Tools that change on reload.",
    symbols=[vis.Symbol(f) for f in SYMBOLS],
))
'''

SECOND = '''
def second_tool() -> str:
    """A tool added after the session started."""
    return "second"
'''


def _install(*, second: bool) -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    text = TOOLS.replace("EXTRA", SECOND if second else "")
    text = text.replace("SYMBOLS", "(first_tool, second_tool)" if second else "(first_tool,)")
    (folder / "kit.py").write_text(text, encoding="utf-8")


def _script(path: Path, turns: list[dict]) -> Path:
    path.write_text(yaml.safe_dump(turns), encoding="utf-8")
    return path


def _names(session: AgentSession) -> set[str]:
    return {tool.name for tool in session.invoker.registry()}


async def test_reload_rebuilds_the_tool_set_of_an_open_session(workspace: Path, tmp_path: Path):
    _install(second=False)
    script = _script(
        tmp_path / "s.yaml",
        [{"code": "print(await second_tool())"}, {"text": "done"}],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        assert "first_tool" in _names(session) and "second_tool" not in _names(session)
        _install(second=True)
        assert "second_tool" not in _names(session)  # built once, kept until a reload
        await host.reload()
        assert {"first_tool", "second_tool"} <= _names(session)
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("call the new tool")
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None and block.stdout.strip() == "second"  # the sandbox sees it
        assert session.id in host.registry.session_tools
        await session.close()
        assert session.id not in host.registry.session_tools  # a closed session's tools are let go
    finally:
        await host.close()


async def test_each_tool_call_happens_at_its_turn_iteration_and_form(
    workspace: Path, tmp_path: Path
):
    (workspace / "notes.txt").write_text("alpha\n", encoding="utf-8")
    code = textwrap.dedent(
        """\
        await cat("notes.txt")
        await cat("notes.txt")
        """
    )
    script = _script(
        tmp_path / "s.yaml",
        [{"code": code}, {"code": 'await cat("notes.txt")'}, {"text": "done"}, {"text": "ok"}],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("read it", mentions=["notes.txt"])
        await session.submit("!echo hi", command=True)
    finally:
        await host.close()

    first, second = [e.turn_id for e in events if isinstance(e, TurnStarted)]
    iterations = [e for e in events if isinstance(e, IterationStarted)]
    assert [(i.turn_id, i.index) for i in iterations] == [(first, 1), (first, 2)]
    sites = [
        (e.activity.tool, e.activity.turn_id, e.activity.iteration_id, e.activity.form)
        for e in events
        if isinstance(e, ActivityEnded)
    ]
    assert sites[0] == ("cat", first, None, 0)  # the @file, before any block
    one, two = iterations
    assert sites[1:4] == [
        ("cat", first, one.iteration_id, 1),
        ("cat", first, one.iteration_id, 1),
        ("cat", first, two.iteration_id, 2),
    ]
    assert [site[1:] for site in sites[4:]] == [(second, None, 0)] * len(sites[4:])
    assert {site[0] for site in sites[4:]} == {"shell", "shell.wait"}


async def test_the_bus_stores_and_publishes_before_the_session_exists(tmp_path: Path):
    store = Store(tmp_path / "vis.db")
    try:
        row = store.create_session(tmp_path, tmp_path)
        bus = EventBus(store)
        seen: list[Event] = []
        bus.subscribe(seen.append)
        early = Notification(row.id, text="said while the session is being assembled")
        await bus.emit(early)
        assert seen == [early]
        assert [stored.event for stored in store.events(row.id)] == [early]

        deps = SessionDeps(
            store=store,
            events=bus,
            model=SessionModel(None, "", "no model"),
            sandbox=None,  # type: ignore[arg-type]  # no block runs here
            invoker=None,  # type: ignore[arg-type]
        )
        session = AgentSession(deps, session_id=row.id, title="")
        usage_seen: list[int] = []
        bus.subscribe(lambda e: usage_seen.append(session.usage.input))
        await bus.emit(UsageReported(row.id, turn_id="t", usage=Usage(input=7)))
        assert usage_seen == [7]  # the session took it into account before others looked
        assert seen[-1].type == "UsageReported"
        assert session.usage.input == 7
    finally:
        store.close()


@pytest.mark.usefixtures("jail_off")  # explicitly: a block changes control files
async def test_changed_control_files_are_told_once_without_hashing_them_after_every_call(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A block of many tool calls hashes the trusted project's control files a few times, not
    after each call, and a change made after its last checked call is told when it ends."""
    import vis_core.host.workspace as host_module
    from vis_core.paths import TrustStore, VisPaths

    (workspace / "vis.yml").write_text("environment:\n  NAME: acme\n", encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)
    hashed: list[Path] = []
    real = host_module.project_fingerprint

    def counted(project: Path | str) -> str:
        hashed.append(Path(project))
        return real(project)

    monkeypatch.setattr(host_module, "project_fingerprint", counted)
    code = textwrap.dedent(
        """\
        for _ in range(40):
            await cat("vis.yml")
        open("vis.yml", "a").write("  OTHER: 1\\n")
        """
    )
    script = _script(tmp_path / "s.yaml", [{"code": code}, {"text": "done"}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list[Event] = []
    try:
        assert host.space.trusted and not hashed  # the start hashes its snapshot, read once
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("read it often, then change it")
    finally:
        await host.close()
    assert len([e for e in events if isinstance(e, ActivityEnded)]) == 40
    assert 1 <= len(hashed) < 9  # the first call, maybe a few more, and the block's end
    notices = [e.text for e in events if isinstance(e, Notification)]
    assert sum("changed since you trusted it" in text for text in notices) == 1
