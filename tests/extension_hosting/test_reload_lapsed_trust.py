"""/reload in a trusted project whose extension file changed since `vis trust`: the project's
extensions are skipped, and the person is told why and what to do, in the Reload result, in
the extension's Settings group and at the running session's next turn."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import BlockFinished, Event, Notification
from vis_core.model.extensions import ExtensionStatus
from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.tree import build_tree

from .harness import code_turn, open_host, write_script

RELEASE = '''import blockether.vis.extension as vis


def release_shell() -> str:
    """Say which release this is."""
    return "release-ok"


vis.register_extension(vis.Extension(
    name="releaser", description="Releases.", alias="releaser",
    symbols=[vis.Symbol(release_shell)],
))
'''


def _project(workspace: Path) -> Path:
    entry = workspace / ".vis" / "extensions" / "release.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(RELEASE, encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)
    return entry


async def test_reload_after_an_extension_edit_says_the_trust_lapsed_everywhere(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    entry = _project(workspace)
    block = "print(await release_shell())"
    write_script(script_path, code_turn(block, reply="first") + code_turn(block, reply="second"))
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("one")
        first = [e for e in events if isinstance(e, BlockFinished)]
        assert first and "release-ok" in first[0].stdout, first
        await host.close_session(session)  # its check of the control files after the turn ran
        session = await host.open_session(session.id)
        events.clear()
        session.subscribe(events.append)

        with entry.open("a", encoding="utf-8") as file:
            file.write("# tweak\n")
        summary = await host.reload()
        assert "1 failed" in summary, summary
        assert "- releaser:" in summary and f"vis trust {workspace}" in summary, summary
        assert "changed since you trusted it" in summary

        skipped = [e for e in host.catalog.loaded.extensions if e.path == entry]
        assert [e.status for e in skipped] == [ExtensionStatus.FAILED]
        groups = {g.name: g for g in build_tree(host.catalog.loaded).extensions}
        group = groups["releaser"]  # the group stays, under the name it had
        assert group.failed and f"vis trust {workspace}" in (group.error or "")
        # the trust notice says it, not "fix the file"
        assert host.catalog.load_warning("start again") is None

        await session.submit("two")
        await host.close_session(session)  # its control-file check, after the turn, ended
        notices = [e.text for e in events if isinstance(e, Notification)]
        lapsed = [text for text in notices if "changed since you trusted it" in text]
        assert len(lapsed) == 1, notices
        assert "skipped its extensions" in lapsed[0] and f"vis trust {workspace}" in lapsed[0]
    finally:
        await host.close()


async def test_a_fresh_start_lists_the_skipped_extension_with_why_and_runs_none(
    vis_home: Path, workspace: Path, script_path: Path, tmp_path: Path
) -> None:
    entry = _project(workspace)
    marker = tmp_path / "ran.txt"
    entry.write_text(RELEASE + f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    write_script(script_path, [{"text": "Done."}])
    host = await open_host(workspace, script_path)
    try:
        (ext,) = [e for e in host.catalog.loaded.extensions if e.path == entry]
        assert ext.name == "release" and ext.status is ExtensionStatus.FAILED
        # the extension's error (after its file) says why and what to do as the start note
        why = "he project's control files (.vis/, vis.yml, .env*){} changed since you trusted it"
        todo = f"eview the change, then run `vis trust {workspace}`"
        assert str(ext.error) == (f"{entry}: not loaded: t{why.format('')}; r{todo} and Reload"), (
            ext.error
        )
        notes = host.startup_notes()
        said = [note for note in notes if why.format(f" in {workspace}") in note]
        assert len(said) == 1 and todo in said[0], notes
        assert host.catalog.load_warning("start again") is None
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("go")
        await host.close_session(session)
        # the start said it: the first turn does not say it again
        assert not [e for e in events if isinstance(e, Notification)], events
    finally:
        await host.close()
    assert not marker.exists()
