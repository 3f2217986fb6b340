"""Changes that are not a save of this workspace reach its open sessions as a save does:
``/reload`` after a hand edit, a save in another workspace of the same Vis, a move into a
group; a reload and a save made together are ordered."""

from __future__ import annotations

import asyncio
from pathlib import Path

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths

from .test_saved_between_requests import WAIT_FOR_GO, saved_mid_block, write_script


async def test_a_reload_and_a_save_made_together_run_one_after_the_other(
    workspace: Path,
) -> None:
    """A reload awaited with a save reads the files wholly before or after it, never while
    it writes them (its read of the file as it was could land in memory after the save's):
    the save's old value is what the reload read when it went first, and both orders end
    with the saved value in memory and on disk."""
    config = VisPaths.from_env().ensure().config_file
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    ended: list[tuple[str, str, str]] = []
    try:
        for edited, value, reload_first in [("100", "25", True), ("200", "10", False)]:
            config.write_text(f'max_iterations = "{edited}"\n')  # by hand, then /reload
            save = host.settings.set("max_iterations", value, "global")
            if reload_first:
                _, saved = await asyncio.gather(host.reload(), save)
            else:
                saved, _ = await asyncio.gather(save, host.reload())
            on_disk = host.settings.global_file.values()["max_iterations"]
            ended.append((saved.old, host.settings.value("max_iterations"), on_disk))
    finally:
        await host.close()
    assert ended == [("100", "25", "25"), ("25", "10", "10")]


async def test_a_hand_edit_read_again_by_reload_reaches_the_open_session(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.yaml", [{"text": "hi"}])
    config = VisPaths.from_env().ensure().config_file
    config.write_text('model = "scripted/first"\n')
    host = await Host.open(HostOptions(workspace=workspace, script=script))
    try:
        session = await host.new_session()
        config.write_text('model = "scripted/second"\nmax_iterations = 10\n')  # by hand
        assert host.models.config.data["model"] == "scripted/second"  # read, as /model does
        await host.reload()
    finally:
        await host.close()
    assert session.next_model.label == "scripted/second"
    assert session.limits.max_iterations == 10


async def test_a_user_value_saved_in_one_workspace_reaches_the_others_a_project_one_does_not(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "vis.yml").write_text("toggles: {}\n", encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)  # project values may be saved
    VisPaths.from_env().ensure().config_file.write_text('model = "scripted/first"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        other = await host.host_at(elsewhere)  # as vis.sessions.create(root=...) opens it
        here, there = await host.new_session(), await other.new_session()
        await host.settings.set("model", "scripted/second", "global")
        await host.settings.set("max_iterations", "25", "global")
        await host.settings.set("max_iterations", "10", "project")
        await other.settings.set("block_time_limit", "600", "global")  # and back
    finally:
        await host.close()
    assert there.next_model.label == "scripted/second"
    assert (here.limits.max_iterations, there.limits.max_iterations) == (10, 25)
    assert here.sandbox.time_limit == there.sandbox.time_limit == 600


async def test_moving_a_session_into_a_group_reaches_it_between_requests(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "script.yaml",
        [{"code": "await list_sessions()\n" + WAIT_FOR_GO}, {"code": "print(2)"}, {"text": "ok"}],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await host.settings.set("block_time_limit", "600", "group", group="team")
        limits: list[float] = []  # what held when each block ended
        session.subscribe(
            lambda _e: limits.append(session.sandbox.time_limit), kinds=(BlockFinished,)
        )

        async def move() -> None:
            moved = await host.commands.run(session, "/group team")
            assert moved.ok, moved
            assert session.sandbox.time_limit == 1800  # the block under way keeps its own

        ended, _blocks = await saved_mid_block(session, workspace, move)
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    assert limits == [1800, 600]


GROUPER = """
import vis_core.extension as vis


def make() -> str:
    \"\"\"A new session in the group 'team'.\"\"\"
    return vis.sessions.create(group="team").id


vis.register_extension(vis.Extension(
    name="grouper", alias="grouper", description="Makes sessions in a group.",
    symbols=[vis.Symbol(make)],
))
"""


async def test_a_session_an_extension_creates_in_a_group_takes_the_groups_values(
    workspace: Path, tmp_path: Path
) -> None:
    extensions = VisPaths.from_env().ensure().extensions_dir
    extensions.mkdir(parents=True, exist_ok=True)
    (extensions / "grouper.py").write_text(GROUPER, encoding="utf-8")
    script = write_script(
        tmp_path / "script.yaml", [{"code": "print(await grouper.make())"}, {"text": "ok"}]
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        await host.settings.set("block_time_limit", "600", "group", group="team")
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(blocks.append, kinds=(BlockFinished,))
        ended = await session.submit("make one")
        created = host.registry.live_session(blocks[0].stdout.strip())
        assert created is not None, blocks[0]
        limit = created.sandbox.time_limit
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    assert limit == 600  # it was built before it joined the group: the move reached it


async def test_a_group_or_session_value_saved_in_one_workspace_reaches_the_others(
    workspace: Path, tmp_path: Path
) -> None:
    """The workspaces share the database: a value saved for a group (through a session of it,
    or by the group's name alone, as ``vis settings set --scope group --group`` does) or for a
    session reaches the open sessions of every workspace it applies to, and no other."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        other = await host.host_at(elsewhere)
        here, there = await host.new_session(), await other.new_session()
        alone = await host.new_session()
        await host.commands.run(here, "/group team")
        await other.commands.run(there, "/group team")
        await host.settings.set("block_time_limit", "600", "group", session_id=here.id)
        await host.settings.set("block_time_limit", "3600", "session", session_id=there.id)
        named = await host.settings.set("max_iterations", "10", "group", group="team")
    finally:
        await host.close()
    assert (named.old, named.new, named.changed) == ("50", "10", True)
    limits = [s.limits.max_iterations for s in (here, there, alone)]
    assert limits == [10, 10, 50]
    assert [s.sandbox.time_limit for s in (here, there, alone)] == [600, 3600, 1800]


WATCHER = """
from pathlib import Path

import vis_core.extension as vis


def _record(old, new, scope):
    with Path(__file__).with_name("watched.txt").open("a", encoding="utf-8") as out:
        out.write(f"{old}->{new}@{scope}\\n")
    if new == "boom":
        raise RuntimeError("the hook refused boom")


vis.register_extension(vis.Extension(
    name="watcher", alias="watcher", description="Records each change of its setting.",
    settings=[vis.Setting(
        id="watch_level", label="Watch level", type="string", default="low",
        scopes=(vis.SettingScope.GLOBAL, vis.SettingScope.GROUP), on_change=_record,
    )],
))
"""


async def test_a_move_into_a_group_runs_the_on_change_of_each_value_it_changes_once(
    workspace: Path,
) -> None:
    extensions = VisPaths.from_env().ensure().extensions_dir
    extensions.mkdir(parents=True, exist_ok=True)
    (extensions / "watcher.py").write_text(WATCHER, encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        session = await host.new_session()
        await host.settings.set("watch_level", "high", "group", group="team")
        moved = await host.commands.run(session, "/group team")
        assert moved.ok, moved
        level = host.settings.get("watch_level", None, session.id)
        await host.settings.set("watch_level", "boom", "group", group="crew")
        refused = await host.commands.run(session, "/group crew")  # moved; the hook raised
    finally:
        await host.close()
    assert level == "high"
    assert "on_change of setting 'watch_level' (watcher) failed" in refused.body
    assert "the hook refused boom. The value stays saved." in refused.body
    recorded = (extensions / "watched.txt").read_text(encoding="utf-8")
    # each save changed its group's value, and each move the session's
    assert recorded == "low->high@group\nlow->high@group\nlow->boom@group\nhigh->boom@group\n"


async def test_a_key_login_saves_is_redacted_by_every_workspace(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """``/login`` in one workspace saves a provider's key as one change of the settings: a
    session of another workspace of the same Vis that prints it stores it redacted."""
    from vis_core.model_choices import entry_named, save_key

    key = "sk-login-7f3a9c21d4e8b605"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "key.txt").write_text(key, encoding="utf-8")
    script = write_script(
        tmp_path / "script.yaml", [{"code": "print(open('key.txt').read())"}, {"text": "ok"}]
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        other = await host.host_at(elsewhere)
        there = await other.new_session()
        entry = entry_named(host.command_deps, "openai")
        assert entry is not None
        await save_key(host.command_deps, entry, key)
        blocks: list[BlockFinished] = []
        there.subscribe(blocks.append, kinds=(BlockFinished,))
        ended = await there.submit("print the key")
    finally:
        await host.close()
    assert ended.status == "completed", ended.error
    assert blocks[0].stdout.strip() == key  # what the session saw; stored redacted
    stored = b"".join(p.read_bytes() for p in vis_home.glob("vis.db*"))
    assert stored and stored.count(key.encode()) == 0


async def test_switching_extensions_and_saving_keys_are_ordered_with_saves(
    workspace: Path,
) -> None:
    """Switching an extension off and saving a provider's key write the user's files as
    saves do, one change at a time: made all at once, none of them is lost."""
    from vis_core.model_choices import entry_named, save_key

    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    names = [f"ext{n}" for n in range(6)]
    try:
        entry = entry_named(host.command_deps, "anthropic")
        assert entry is not None
        await asyncio.gather(
            *(host.settings.set_enabled(name, False) for name in names),
            host.settings.set("max_iterations", "10", "global"),
            save_key(host.command_deps, entry, "sk-ant-0123456789abcdef"),
            host.settings.set("block_time_limit", "600", "global"),
        )
        disabled = host.settings.global_file.disabled()
        saved = host.settings.global_file.values()
        keys = host.settings.secrets.values()
    finally:
        await host.close()
    assert disabled == frozenset(names)
    assert (saved["max_iterations"], saved["block_time_limit"]) == ("10", "600")
    assert keys == {"env:ANTHROPIC_API_KEY": "sk-ant-0123456789abcdef"}
