"""The model's session tools reach this workspace's sessions unless the person widens them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions

READ = """
rows = await list_sessions()
print("listed", sorted(row["id"] for row in rows))
print("found", sorted(row["id"] for row in await list_sessions("launch plans")))
for key in ({other!r}, {other!r}[:8]):
    try:
        data = await read_session(key)
        print("read", data["session"]["id"])
    except Exception as exc:
        print("refused", type(exc).__name__, str(exc).splitlines()[0])
"""


async def _session(workspace: Path, script: Path, request: str) -> str:
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit(request)
        return session.id
    finally:
        await host.close()


async def _run_in(workspace: Path, tmp_path: Path, other: str) -> tuple[str, str]:
    script = tmp_path / "read.yaml"
    steps = [{"code": READ.format(other=other)}, {"text": "Done."}]
    script.write_text(yaml.safe_dump(steps), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("launch plans: what did we say?")
        block = next(e for e in events if isinstance(e, BlockFinished))
        assert block.error is None, block.error
        return session.id, block.stdout
    finally:
        await host.close()


@pytest.fixture
def two_workspaces(tmp_path: Path, vis_home: Path) -> tuple[Path, Path, Path]:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    hello = tmp_path / "hello.yaml"
    hello.write_text(yaml.safe_dump([{"text": "Noted."}]), encoding="utf-8")
    return ours, theirs, hello


async def test_session_tools_reach_only_this_workspace_by_default(
    tmp_path: Path, vis_home: Path, two_workspaces: tuple[Path, Path, Path]
) -> None:
    ours, theirs, hello = two_workspaces
    earlier = await _session(ours, hello, "launch plans for ours")
    other = await _session(theirs, hello, "launch plans: the other project's secret")
    own, printed = await _run_in(ours, tmp_path, other)
    assert f"listed {sorted([earlier, own])}" in printed, printed
    assert f"found {sorted([earlier, own])}" in printed, printed
    assert other not in printed.replace(f"no session {other!r}", "").replace(
        f"no session {other[:8]!r}", ""
    )
    assert printed.count("refused LookupError") == 2, printed
    assert "sessions_scope" in printed


async def test_sessions_scope_all_reaches_every_workspace(
    tmp_path: Path, vis_home: Path, two_workspaces: tuple[Path, Path, Path]
) -> None:
    ours, theirs, hello = two_workspaces
    (vis_home / "config.toml").write_text('sessions_scope = "all"\n')
    earlier = await _session(ours, hello, "launch plans for ours")
    other = await _session(theirs, hello, "launch plans: the other project's secret")
    own, printed = await _run_in(ours, tmp_path, other)
    assert f"listed {sorted([earlier, other, own])}" in printed, printed
    assert f"read {other}" in printed and "refused" not in printed, printed


async def test_a_project_cannot_widen_the_scope_before_trust(
    tmp_path: Path, vis_home: Path, two_workspaces: tuple[Path, Path, Path]
) -> None:
    ours, theirs, hello = two_workspaces
    (ours / ".vis").mkdir()
    (ours / ".vis" / "settings.toml").write_text('[settings]\nsessions_scope = "all"\n')
    other = await _session(theirs, hello, "launch plans: the other project's secret")
    _, printed = await _run_in(ours, tmp_path, other)
    assert printed.count("refused LookupError") == 2, printed


async def test_a_trusted_project_cannot_widen_the_scope_either(
    tmp_path: Path, vis_home: Path, two_workspaces: tuple[Path, Path, Path]
) -> None:
    """A trusted project's sessions_scope = 'all' opened every other project's sessions
    to the model, while the refusal said the setting is the person's (found by a tester)."""
    from vis_core.paths import TrustStore, VisPaths

    ours, theirs, hello = two_workspaces
    (ours / ".vis").mkdir()
    (ours / ".vis" / "settings.toml").write_text('[settings]\nsessions_scope = "all"\n')
    TrustStore(VisPaths.from_env()).trust(ours)
    other = await _session(theirs, hello, "launch plans: the other project's secret")
    _, printed = await _run_in(ours, tmp_path, other)
    assert printed.count("refused LookupError") == 2, printed
