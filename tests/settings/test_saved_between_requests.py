"""A saved change reaches a live session on the loop, between requests, never mid-request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import yaml
from processes import alive

from vis_core.agent.deps import SessionModel
from vis_core.agent.session import AgentSession
from vis_core.events import ActivityEnded, BlockFinished, Event, TurnEnded, UsageReported
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths
from vis_core.providers.base import ModelChoice, ModelRequest, StreamEvent
from vis_core.providers.scripted import ScriptedProvider
from vis_core.settings.service import SaveResult

from .support import user_extensions

SCRIPT = """\
- text: "Looking at it now, one piece at a time."
  chunk: 4
  code: print("ran")
- text: "Done."
"""


class HeldProvider(ScriptedProvider):
    """The scripted model, holding its first response open after one piece until let go."""

    def __init__(self, script: Path) -> None:
        super().__init__(script)
        self.streaming = asyncio.Event()  # the first request is under way
        self.go_on = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        first = not self.requests
        async for event in super().stream(request):
            yield event
            if first and not self.go_on.is_set():
                self.streaming.set()
                await self.go_on.wait()


async def test_a_model_saved_mid_request_applies_when_the_request_ends(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    VisPaths.from_env().ensure().config_file.write_text('model = "scripted/first"\n')
    host = await Host.open(HostOptions(workspace=workspace, script=script))  # the setting decides
    try:
        session = await host.new_session()
        held = HeldProvider(script)
        await session.switch_model(SessionModel(held, "first", "scripted/first"))
        usage: list[str] = []
        session.subscribe(lambda e: usage.append(e.model), kinds=(UsageReported,))
        turn = asyncio.create_task(session.submit("look"))
        await held.streaming.wait()

        saved = await host.settings.set(
            "model", "scripted/second", "session", session_id=session.id
        )
        assert saved.changed
        assert session.model.label == "scripted/first"  # the request under way keeps its model
        assert session.next_model.label == "scripted/second"
        held.go_on.set()
        ended = await turn

        assert ended.status == "completed", ended.error
        assert len(held.requests) == 1  # the second request went to the new model
        assert usage == ["scripted/first", "scripted/second", "scripted/second"]
        assert session.model.label == "scripted/second"
        assert session.next_model is session.model
    finally:
        await host.close()


# a block that runs until the test writes the file ``go`` into the workspace
WAIT_FOR_GO = (
    "import asyncio, pathlib\n"
    "while not pathlib.Path('go').exists():\n"
    "    await asyncio.sleep(0.01)\n"
)


# a first block that lists the sessions, waits for "go", then lists them again
LISTS_AROUND_GO = (
    "before = len(await list_sessions())\n"
    + WAIT_FOR_GO
    + "print(before, len(await list_sessions()))"
)


def write_script(path: Path, responses: list[dict[str, str]]) -> Path:
    path.write_text(yaml.safe_dump(responses), encoding="utf-8")
    return path


def first_event(session: AgentSession, kind: type[Event]) -> asyncio.Event:
    """Set once ``session`` publishes an event of ``kind``."""
    seen = asyncio.Event()
    session.subscribe(lambda _event: seen.set(), kinds=(kind,))
    return seen


async def saved_mid_block(
    session: AgentSession, workspace: Path, save: Callable[[], Awaitable[object]]
) -> tuple[TurnEnded, list[BlockFinished]]:
    """Run a turn whose first block calls a tool, then waits for the file ``go``: ``save``
    runs after that call, while the block waits. The turn's end and its blocks."""
    blocks: list[BlockFinished] = []
    session.subscribe(blocks.append, kinds=(BlockFinished,))
    called = first_event(session, ActivityEnded)  # the first block's first tool call
    turn = asyncio.create_task(session.submit("look"))
    await called.wait()
    await save()
    (workspace / "go").touch()
    return await turn, blocks


async def test_saves_started_together_run_one_after_another(workspace: Path) -> None:
    user_extensions("reports")  # steering_mode's on_change runs in a real extension worker
    host = await Host.open(HostOptions(workspace=workspace))
    seen: list[tuple[str, str, str]] = []

    async def record(result: SaveResult) -> None:  # what was saved, and what holds now
        seen.append((result.old, result.new, host.settings.get("steering_mode", None)))

    host.settings.saved_listeners.append(record)
    try:
        first, second = await asyncio.gather(
            host.settings.set("steering_mode", "control", "global"),
            host.settings.set("steering_mode", "vibe", "global"),
        )
        marker = VisPaths.from_env().extensions_dir / "steering-mode.txt"
        hooks = marker.read_text(encoding="utf-8")
        saved = host.settings.global_file.values()
    finally:
        await host.close()
    assert (first.old, first.new, first.hook_error) == ("vibe", "control", None)
    assert (second.old, second.new, second.hook_error) == ("control", "vibe", None)
    assert hooks == "vibe->control@global\ncontrol->vibe@global\n"
    # each listener ran before the next save wrote anything
    assert seen == [("vibe", "control", "control"), ("control", "vibe", "vibe")]
    assert saved["steering_mode"] == "vibe"


async def test_a_global_model_switches_the_sessions_without_one_of_their_own(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "script.yaml", [{"code": WAIT_FOR_GO + "print('ran')"}, {"text": "Done."}]
    )
    VisPaths.from_env().ensure().config_file.write_text('model = "scripted/first"\n')
    host = await Host.open(HostOptions(workspace=workspace, script=script))
    try:
        own, follows, given = [await host.new_session() for _ in range(3)]
        await host.settings.set("model", "scripted/mine", "session", session_id=own.id)
        await given.switch_model(host.models.session_model(ModelChoice.parse("scripted/given")))
        usage: list[str] = []
        follows.subscribe(lambda e: usage.append(e.model), kinds=(UsageReported,))
        running = first_event(follows, UsageReported)  # its first request answered
        turn = asyncio.create_task(follows.submit("look"))
        await running.wait()  # its block waits for "go"

        saved = await host.settings.set("model", "scripted/second", "global")
        assert saved.changed
        labels = [s.next_model.label for s in (own, follows, given)]
        assert labels == ["scripted/mine", "scripted/second", "scripted/given"]
        (workspace / "go").touch()
        ended = await turn

        await host.settings.reset("model", "session", session_id=own.id)
        assert own.next_model.label == "scripted/second"  # it follows the global value now
        assert given.next_model.label == "scripted/given"
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    # the request under way kept its model; the next ones (a fresh script) went to the new one
    assert usage == ["scripted/first", "scripted/second", "scripted/second"]


async def test_introspection_saved_during_a_block_applies_from_the_next_request(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"code": LISTS_AROUND_GO},
            {"code": "print('list_sessions' in dir(), 'apropos' in dir())"},
            {"text": "ok"},
        ],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        ended, blocks = await saved_mid_block(
            session, workspace, lambda: host.settings.set("introspection", False, "global")
        )
        prompt = await session.system_prompt()
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    assert [(b.stdout.strip(), b.error) for b in blocks] == [("1 1", None), ("False False", None)]
    assert "apropos(pattern)" not in prompt


async def test_introspection_saved_during_a_cancelled_block_applies_when_the_turn_ends(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "script.yaml",
        [{"code": "await list_sessions()\n" + WAIT_FOR_GO}, {"text": "ok"}],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        called = first_event(session, ActivityEnded)
        turn = asyncio.create_task(session.submit("look"))
        await called.wait()
        await host.settings.set("introspection", False, "global")
        kept = session.invoker.registry().get("list_sessions")  # the block's request's tools
        session.cancel()
        ended = await turn
        after = session.invoker.registry().get("list_sessions")  # what vis.tools finds now
    finally:
        await host.close()
    assert ended.status == "cancelled"
    assert kept is not None and after is None


FOLLOWER = """
import vis_core.extension as vis


def _follow(old, new, scope):
    vis.session.set_model(f"scripted/{new}")  # saves the session's model: a save inside a save


vis.register_extension(vis.Extension(
    name="follower", alias="follower", description="Its setting picks the session's model.",
    settings=[vis.Setting(
        id="follow_model", label="Model to follow", type="string", default="first",
        scopes=(vis.SettingScope.SESSION,), on_change=_follow,
    )],
))
"""


async def test_an_on_change_that_saves_a_setting_is_not_held_up_by_its_own_save(
    workspace: Path, tmp_path: Path
) -> None:
    """Saves run one after another, but a save made by the ``on_change`` of the save under
    way (here ``vis.session.set_model`` saving the session's model) is part of it: it must
    not wait for the save that waits for it (the hook timed out, the model never changed)."""
    extensions = VisPaths.from_env().ensure().extensions_dir
    extensions.mkdir(parents=True, exist_ok=True)
    (extensions / "follower.py").write_text(FOLLOWER, encoding="utf-8")
    script = write_script(tmp_path / "script.yaml", [{"text": "hi"}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("hi")  # its extension worker runs the hook
        saved = await host.settings.set("follow_model", "second", "session", session_id=session.id)
        model = session.next_model.label
        stored = host.settings.get("model", None, session.id)
    finally:
        await host.close()
    assert saved.hook_error is None
    assert (model, stored) == ("scripted/second", "scripted/second")


async def test_limits_and_sessions_scope_saved_during_a_block_apply_from_the_next_request(
    workspace: Path, tmp_path: Path
) -> None:
    """``max_iterations``, ``block_time_limit`` and ``sessions_scope`` were read once, when
    the session was built: a save reaches it from its next request; the request under way
    (its block) keeps what it began with."""
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"code": LISTS_AROUND_GO},
            {"code": "print(len(await list_sessions()))"},
            *({"code": f"print({n})"} for n in range(3, 13)),
            {"text": "never reached: the turn stops at 10 blocks"},
        ],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        (tmp_path / "elsewhere").mkdir()
        other = await host.host_at(tmp_path / "elsewhere")  # a session of another workspace
        await other.new_session()
        session = await host.new_session()
        limits: list[tuple[int, float]] = []  # what held when each block ended
        session.subscribe(
            lambda _e: limits.append((session.limits.max_iterations, session.sandbox.time_limit)),
            kinds=(BlockFinished,),
        )

        async def save() -> None:
            for setting_id, value in [
                ("max_iterations", "10"),
                ("block_time_limit", "600"),
                ("sessions_scope", "all"),
            ]:
                assert (await host.settings.set(setting_id, value, "global")).changed
            assert session.limits.max_iterations == 50  # the request under way keeps its own

        ended, blocks = await saved_mid_block(session, workspace, save)
    finally:
        await host.close()
    assert ended.status == "max_iterations", ended.error
    assert ended.error == "stopped after 10 iterations (the max_iterations setting)"
    assert [b.stdout.strip() for b in blocks[:3]] == ["1 1", "2", "3"]
    assert len(blocks) == 11  # ten run, the eleventh recorded as not run
    assert limits[:2] == [(50, 1800.0), (10, 600.0)]


def outside_reads(outside: Path) -> str:
    """A block's code that says whether it (and the host's ``cat``) can read ``outside``."""
    return (
        "import os\n"
        f"seen = os.path.exists({str(outside)!r})\n"
        "try:\n"
        f"    await cat({str(outside)!r})\n"
        "    by_cat = 'read'\n"
        "except Exception:\n"
        "    by_cat = 'refused'\n"
        "print(seen, by_cat, helper())"
    )


async def test_a_jail_turned_on_during_a_block_confines_the_next_one(
    workspace: Path, tmp_path: Path
) -> None:
    from sandbox.hostile import BWRAP_PROBLEM

    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workspace's", encoding="utf-8")
    script = write_script(
        tmp_path / "script.yaml",
        [
            {
                "code": "def helper():\n    return 'kept'\n\nawait list_sessions()\n"
                + WAIT_FOR_GO
                + outside_reads(outside)
            },
            {"code": outside_reads(outside)},
            {"text": "ok"},
        ],
    )
    VisPaths.from_env().ensure().config_file.write_text("jail = false\n")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()

        async def save() -> None:
            await host.settings.set("jail", True, "global")
            await host.settings.set("memory_limit", "4096", "global")

        ended, blocks = await saved_mid_block(session, workspace, save)
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    first, second = blocks
    # the block under way ran on unconfined (the host's tools kept to the jail at once); the
    # next one ran in a new, jailed process, its helper restored, and the person and the
    # model read why the sandbox restarted
    assert (first.stdout.strip(), first.restarted) == ("True refused kept", False)
    assert second.restarted and second.error is None, second.error
    note, printed = second.stdout.strip().splitlines()
    assert note.startswith(
        "[sandbox] The sandbox process was stopped to apply the changed settings jail and "
        "memory_limit and was restarted; variables were restored from the last snapshot: "
        "helpers helper"
    )
    assert printed == "False refused kept"


async def test_limits_saved_during_a_block_shape_the_next_sandbox_process(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    limits = (
        "import resource\n"
        "print(resource.getrlimit(resource.RLIMIT_DATA)[0] >> 20, "
        "resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    )
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"code": "await list_sessions()\n" + WAIT_FOR_GO + limits},
            {"code": limits},
            {"text": "ok"},
        ],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()

        async def save() -> None:
            await host.settings.set("memory_limit", "1024", "global")
            await host.settings.set("process_limit", "256", "session", session_id=session.id)

        ended, blocks = await saved_mid_block(session, workspace, save)
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    first, second = blocks
    assert (first.stdout.strip(), first.restarted) == ("8192 4096", False)
    assert second.restarted
    assert second.stdout.strip().splitlines()[-1] == "1024 256"
    # one note names both changes that waited for the block
    assert "changed settings memory_limit and process_limit and was restarted" in second.stdout


async def test_a_lowered_limit_stops_the_idle_sandbox_process_a_thread_was_left_in(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    """A block leaves a thread running in the sandbox process; the person lowers a limit
    between requests. The process is stopped once no block runs in it, not at the next block:
    the thread must not run on past the new limit (only a jail turned on did this)."""
    left = "import os, threading, time\nthreading.Thread(target=time.sleep, args=(600,)).start()"
    script = write_script(
        tmp_path / "script.yaml",
        [{"code": left + "\nprint(os.getpid())"}, {"text": "Left it running."}],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(blocks.append, kinds=(BlockFinished,))
        assert (await session.submit("start it")).status == "completed"
        pid = int(blocks[0].stdout)
        assert alive(pid)
        assert (await host.settings.set("process_limit", "256", "global")).changed
        for _ in range(1000):  # the stop runs on the loop, after the save
            if not alive(pid):
                break
            await asyncio.sleep(0.01)
        assert not alive(pid)
    finally:
        await host.close()


async def test_an_iteration_limit_the_command_line_gave_stays_when_the_setting_is_saved(
    workspace: Path,
) -> None:
    from vis_core.printmode import RunLimits

    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        idle, given = await host.new_session(), await host.new_session()
        RunLimits(max_turns=3).apply(given)  # vis run --max-turns 3
        await host.settings.set("max_iterations", "25", "global")
    finally:
        await host.close()
    assert idle.limits.max_iterations == 25  # no turn runs: at once
    assert (given.limits.max_iterations, given.limits.max_iterations_source) == (
        3,
        "--max-turns 3",
    )
