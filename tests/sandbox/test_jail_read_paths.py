"""``jail_read_paths``: the person's toolchains under home, shown read-only in the jail."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths, vis_folders
from vis_core.settings.core import check_value
from vis_core.system.jail_paths import hidden_path_entries, read_paths
from vis_core.welcome import jail_mode

from .hostile import BWRAP_PROBLEM

jailed = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))

RUN_TOOL = (
    "sh = await shell('hello; touch $HOME/.toolchain/written; echo touch $?')\n"
    "print((await sh.wait(30)).exit_code, (await sh.logs()).strip())\n"
    "import shutil\n"  # the block itself spawns nothing in the jail: it reads the program
    "found = shutil.which('hello')\n"
    "print('block reads:', open(found).read().splitlines()[1] if found else 'no hello')\n"
)


@pytest.fixture
def toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding a toolchain whose ``bin`` is on PATH, as pyenv or nvm make."""
    home = tmp_path / "ada"
    tools = home / ".toolchain"
    (tools / "bin").mkdir(parents=True)
    hello = tools / "bin" / "hello"
    hello.write_text("#!/bin/sh\necho hello from the toolchain\n")
    hello.chmod(0o755)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{tools / 'bin'}:/usr/bin:/bin")
    return tools


def test_entries_that_would_show_too_much_are_left_out_with_the_reason(
    toolchain: Path, tmp_path: Path, vis_home: Path
) -> None:
    home = toolchain.parent
    (vis_home / "logs").mkdir()
    link = tmp_path / "link"
    link.symlink_to(toolchain)
    (tmp_path / "file").write_text("x")
    own = vis_folders()
    value = ", ".join(
        ["~/.toolchain", str(link), "~", "/", str(tmp_path), "relative/bin", "~/missing"]
        + [str(tmp_path / "file"), str(vis_home), str(vis_home / "logs"), "/proc", "/run/user"]
        + ["/var/tmp", "/var"]
    )
    view = read_paths(value, own)
    assert view.shown == (toolchain.resolve(),)  # the link names the same folder: once
    reasons = [line.split(": ", 1)[1] for line in view.left_out]
    assert reasons == [
        "would show your whole home folder; name its toolchains",
        "would show your whole home folder; name its toolchains",
        "would show your whole home folder; name its toolchains",  # tmp_path holds home
        "not an absolute path (start it with / or ~/)",
        "does not exist",
        "not a folder",
        "holds or lies in Vis's own folders (keys, sessions)",
        "holds or lies in Vis's own folders (keys, sessions)",
        "a kernel or socket folder",
        "a kernel or socket folder",
        "a shared temporary folder (other programs' sockets)",
        "a shared temporary folder (other programs' sockets)",  # /var holds /var/tmp
    ], view.left_out
    assert str(home) not in map(str, view.shown)


def test_a_value_that_leaves_an_entry_out_is_not_saved(toolchain: Path) -> None:
    check_value("jail_read_paths", "~/.toolchain")
    with pytest.raises(ValueError, match=r"jail_read_paths': ~: would show your whole home"):
        check_value("jail_read_paths", "~/.toolchain, ~")


def test_the_path_folders_the_jail_hides_are_named(toolchain: Path, tmp_path: Path) -> None:
    env = {"PATH": f"{toolchain / 'bin'}:/usr/bin:relative:{tmp_path / 'gone'}:/bin"}
    assert hidden_path_entries(env, tmp_path / "work", ()) == [toolchain / "bin"]
    assert hidden_path_entries(env, tmp_path / "work", (toolchain.resolve(),)) == []
    inside = {"PATH": str(toolchain / "bin")}
    assert hidden_path_entries(inside, toolchain.parent, ()) == []  # in the workspace


@jailed
async def test_the_jail_line_says_which_path_folders_are_hidden_and_what_shows_them(
    toolchain: Path, workspace: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        on, line = jail_mode(host.settings, workspace)
        assert on and "commands in ~/.toolchain/bin (on your PATH) are not found" in line
        # a setting, and where to set it (it read as if the person should know the name)
        assert "the setting jail_read_paths shows folders read-only (F2 or /settings" in line
        assert "vis settings set from a shell)" in line
        await host.settings.set("jail_read_paths", "~/.toolchain", "global")
        assert "not found" not in jail_mode(host.settings, workspace)[1]
    finally:
        await host.close()
    # a hand-edited value that names home is left out, and the line says so
    (vis_home / "config.toml").write_text('jail = true\njail_read_paths = "~"\n')
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        line = jail_mode(host.settings, workspace)[1]
        assert "jail_read_paths leaves out ~: would show your whole home folder" in line
        assert host.space.confinement("s").read_paths == ()
    finally:
        await host.close()


@jailed
async def test_a_shown_toolchain_runs_read_only_and_the_rest_of_home_stays_hidden(
    toolchain: Path, workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """Without the setting the jail hides the toolchain ("not found", as the person's
    pyenv or nvm); saved mid-session, the next block runs it, cannot change it, and still
    sees nothing else of home."""
    (vis_home / "config.toml").write_text("jail = true\n")
    check_ssh = "import os\nprint('ssh', os.path.exists(os.path.expanduser('~/.ssh/id_ed25519')))\n"
    steps = [{"code": RUN_TOOL}, {"text": "1"}, {"code": RUN_TOOL + check_ssh}, {"text": "2"}]
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(steps), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=path))
    try:
        session = await host.new_session()
        ended: list[BlockFinished] = []
        session.subscribe(lambda e: ended.append(e) if type(e) is BlockFinished else None)
        await session.submit("first")
        assert (await host.settings.set("jail_read_paths", "~/.toolchain", "global")).changed
        await session.submit("second")
    finally:
        await host.close()
    assert [block.error for block in ended] == [None, None]
    seen = [block.stdout for block in ended]
    before, after = seen[0].splitlines(), seen[1].splitlines()
    assert "hello: command not found" in seen[0], seen[0]
    assert before[-1] == "block reads: no hello", seen[0]
    assert "stopped to apply the changed setting jail_read_paths" in after[0], seen[1]
    assert after[1] == "0 hello from the toolchain", seen[1]
    assert "Read-only file system" in seen[1] and "touch 1" in seen[1]
    assert after[-2:] == ["block reads: echo hello from the toolchain", "ssh False"], seen[1]
    assert not (toolchain / "written").exists()


async def test_a_project_cannot_show_folders_to_the_jail(
    toolchain: Path, workspace: Path, vis_home: Path
) -> None:
    (workspace / ".vis").mkdir()
    (workspace / ".vis" / "settings.toml").write_text(
        '[settings]\njail_read_paths = "~/.toolchain"\n'
    )
    from vis_core.paths import TrustStore

    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        assert host.space.confinement("s").read_paths == ()
    finally:
        await host.close()


@jailed
async def test_a_shown_folder_the_model_can_move_does_not_lead_the_jail_elsewhere(
    tmp_path: Path, vis_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vis started in home, with a toolchain listed that lies deeper in it: a block moves the
    toolchain's folder away and puts a link to a hidden host folder in its place. The next
    shell command's jail must not show that folder."""
    home = tmp_path / "ada"
    tool_bin = home / "sdk" / "flutter" / "bin"
    tool_bin.mkdir(parents=True)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "secret.txt").write_text("host secret\n")
    monkeypatch.setenv("HOME", str(home))
    (vis_home / "config.toml").write_text('jail = true\njail_read_paths = "~/sdk/flutter/bin"\n')
    code = (
        "import os\n"
        "sdk = os.path.expanduser('~/sdk')\n"
        "try:\n"
        "    os.rename(sdk + '/flutter', sdk + '/moved')\n"
        "    os.makedirs(sdk + '/flutter')\n"
        f"    os.symlink({str(hidden)!r}, sdk + '/flutter/bin')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
        "sh = await shell('cat ~/sdk/flutter/bin/secret.txt')\n"
        "print('shell:', (await sh.wait(30)).exit_code, (await sh.logs()).strip())\n"
    )
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump([{"code": code}, {"text": "1"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=home, provider="scripted", script=path))
    try:
        assert host.space.confinement("s").read_paths == (tool_bin.resolve(),)
        session = await host.new_session()
        ended: list[BlockFinished] = []
        session.subscribe(lambda e: ended.append(e) if type(e) is BlockFinished else None)
        await session.submit("go")
    finally:
        await host.close()
    assert [block.error for block in ended] == [None], ended
    lines = ended[0].stdout.splitlines()
    assert lines[0] == "refused 16", lines  # EBUSY: the folder is a mount point in the jail
    assert lines[1].startswith("shell: 1 cat:") and "host secret" not in lines[1], lines
    assert not (home / "sdk" / "moved").exists()
