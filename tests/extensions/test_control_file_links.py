"""A control file that is a link is read only where it leads to a regular file of the project:
a link a block makes to a host file never brings it into the block's environment, one to
``/proc/self/*`` neither crashes nor hangs Vis, and ``vis trust`` names each link it follows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import script, vis
from processes import bytes_read

from vis_core.cli import main
from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths, take_snapshot
from vis_core.system.jail_check import jail_problem


async def _block(workspace: Path, tmp_path: Path, code: str) -> tuple[str, list[str]]:
    """What one block printed in a new session of ``workspace``, and the start's notes."""
    steps = script(tmp_path, [{"code": "import os\n" + code}, {"text": "done"}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=steps))
    try:
        notes = host.startup_notes()
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("go")
    finally:
        await host.close()
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    return block.stdout.strip(), notes


async def test_a_link_a_block_makes_to_a_host_file_never_reaches_the_environment(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A jailed block linked the absent ``.env.local`` to a host file; `vis trust` said only
    "environment and settings files: .env.local", and once the person trusted that, the next
    block's environment held the host file's secret (found by a tester)."""
    if jail_problem() is not None:
        pytest.skip(jail_problem())
    secret = tmp_path / "secret-creds"
    secret.write_text("API_TOKEN=hunter2\n")
    (workspace / ".env").write_text("PLAIN=1\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    linked, _ = await _block(workspace, tmp_path, f"os.symlink({str(secret)!r}, '.env.local')")
    assert (workspace / ".env.local").is_symlink()

    assert main(["trust", str(workspace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    why = f"it is a link leading out of the project (to {secret}), which Vis does not follow"
    assert f"  ! .env.local not loaded: {why}" in lines
    assert "  environment and settings files: .env" in lines  # .env.local not among them
    printed, notes = await _block(
        workspace, tmp_path, "print(os.environ.get('API_TOKEN'), os.environ.get('PLAIN'))"
    )
    assert printed == "None 1"
    assert f"project {workspace.resolve()}: .env.local not loaded: {why}" in notes


async def test_a_link_inside_the_project_is_followed_and_vis_trust_names_it(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "config").mkdir()
    (workspace / "config" / "dev.env").write_text("MODE=dev\n")
    os.symlink("config/dev.env", workspace / ".env.local")
    assert main(["trust", str(workspace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  environment and settings files: .env.local" in lines
    assert "  links followed (their targets load): .env.local -> config/dev.env" in lines
    assert take_snapshot(workspace).files[".env.local"] == b"MODE=dev\n"


@pytest.mark.parametrize("target", ["/proc/self/mem", "/proc/self/pagemap"])
def test_a_control_file_linked_to_proc_is_named_not_read(
    workspace: Path, vis_home: Path, tmp_path: Path, target: str
) -> None:
    """``.env.x -> /proc/self/mem`` made every `vis run` there die with a traceback
    (``OSError: [Errno 5]``); ``-> /proc/self/pagemap`` (size 0) made a start hash 256 GiB."""
    os.symlink(target, workspace / ".env.x")
    before = bytes_read()
    snapshot = take_snapshot(workspace)
    assert bytes_read() - before < 1 << 20
    assert "leading out of the project" in snapshot.problems[".env.x"]
    trusted = vis("trust", str(workspace), cwd=workspace, env_home=vis_home)
    assert trusted.returncode == 0, trusted.stderr
    assert ".env.x not loaded: it is a link leading out of the project (to /proc/" in trusted.stdout
    steps = script(tmp_path, [{"text": "hello"}])
    done = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(steps),
        "hi",
        cwd=workspace,
        env_home=vis_home,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "hello" in done.stdout
    assert ".env.x not loaded: it is a link leading out of the project" in done.stderr


def test_a_hard_linked_control_file_is_named_and_not_loaded(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A block's ``os.link('z', '.env.z')`` leaves a control file a later block can change
    through ``z`` (the jail keeps only ``.env.z`` read-only): Vis does not load it, and says
    how to give it a file of its own without a fixed name in the shared /tmp."""
    (workspace / "z").write_text("A=1\n")
    os.link(workspace / "z", workspace / ".env.z")
    assert main(["trust", str(workspace)]) == 0
    out = capsys.readouterr().out
    env = workspace.resolve() / ".env.z"
    assert "  ! .env.z not loaded: it has another name (a hard link, 2 names in all)" in out
    assert f"(cp -p {env} {env}.own && mv {env}.own {env})" in out
    assert ".env.z" not in take_snapshot(workspace).files
