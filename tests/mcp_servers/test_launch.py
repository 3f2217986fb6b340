"""The person's own stdio servers start outside the workspace: an untrusted checkout's
``server.py`` or ``node_modules/.bin`` copy never runs in their place."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

import pytest
from processes import fresh_python
from warm_servers import command as warm

from vis_core.mcp.client import State
from vis_core.mcp.config import load_config
from vis_core.mcp.launch import start_folder
from vis_core.mcp.manager import McpManager
from vis_core.paths import TrustStore, VisPaths
from vis_core.system.programs import path_outside

from .conftest import SERVER, stdio_entry, write_config

PLANTED = """\
#!{python}
import os, sys
with open({marker!r}, "w") as f:
    f.write(os.getcwd() + " " + " ".join(sys.argv))
"""


def plant(path: Path, marker: Path) -> None:
    """An executable Python file at ``path`` that writes ``marker`` when it runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLANTED.format(python=sys.executable, marker=str(marker)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


async def connect(workspace: Path, servers: dict, *, trusted: bool = False) -> McpManager:
    """The servers of ``workspace`` (user ``mcp.json`` = ``servers``), connected or failed."""
    paths = VisPaths.from_env().ensure()
    write_config(paths.mcp_file, servers)
    if trusted:
        TrustStore(paths).trust(workspace)
    config = load_config(paths.mcp_file, workspace, trusted=trusted)
    manager = McpManager(config, workspace=workspace, paths=paths)
    manager.start()
    await manager.wait_all(60)
    return manager


def real_server_bin(folder: Path) -> Path:
    """A folder holding ``fixture-mcp``: the real test server (started warm), by a bare name."""
    folder.mkdir()
    command = folder / "fixture-mcp"
    command.write_text(f"#!/bin/sh\nexec {shlex.join(warm(SERVER, 'stdio'))}\n")
    command.chmod(0o755)
    return folder


async def test_python_dash_m_server_does_not_import_the_checkouts_module(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    plant(workspace / "server_app.py", marker)  # what `python -m server_app` would import
    entry = {
        "command": sys.executable,
        "args": ["-m", "server_app", "stdio"],
        "env": {"PYTHONPATH": str(SERVER.parent)},  # the real one
    }
    manager = await connect(workspace, {"fix": entry})
    try:
        conn = manager.get("fix")
        assert conn is not None
        assert conn.state is State.CONNECTED, (conn.error, conn.stderr_tail())
        assert not marker.exists(), marker.read_text()
        assert f"fixture server starting in {start_folder()}" in conn.stderr_tail().splitlines()
        assert not any(start_folder().iterdir())  # nothing of the checkout there
    finally:
        await manager.close()


@pytest.mark.parametrize("entry", ["node_modules/.bin", ".", "", "{workspace}/node_modules/.bin"])
async def test_a_path_entry_into_the_workspace_does_not_pick_the_command(
    entry: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    plant(workspace / "node_modules" / ".bin" / "fixture-mcp", marker)
    plant(workspace / "fixture-mcp", marker)
    real = real_server_bin(tmp_path / "real-bin")
    first = entry.format(workspace=workspace)
    monkeypatch.setenv("PATH", os.pathsep.join([first, str(real), os.environ["PATH"]]))
    manager = await connect(workspace, {"fix": {"command": "fixture-mcp"}})
    try:
        conn = manager.get("fix")
        assert conn is not None
        assert not marker.exists(), marker.read_text()
        assert conn.state is State.CONNECTED, (conn.error, conn.stderr_tail())
    finally:
        await manager.close()


async def test_an_entrys_own_path_does_not_reach_into_the_workspace_either(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    plant(workspace / "bin" / "fixture-mcp", marker)
    real = real_server_bin(tmp_path / "real-bin")
    path = os.pathsep.join(["bin", str(workspace / "bin"), str(real), os.environ["PATH"]])
    manager = await connect(workspace, {"fix": {"command": "fixture-mcp", "env": {"PATH": path}}})
    try:
        conn = manager.get("fix")
        assert conn is not None
        assert not marker.exists(), marker.read_text()
        assert conn.state is State.CONNECTED, (conn.error, conn.stderr_tail())
    finally:
        await manager.close()


@pytest.mark.skipif(shutil.which("npx") is None, reason="needs npx")
async def test_npx_does_not_run_the_checkouts_copy_of_the_package(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    package = workspace / "node_modules" / "server-filesystem"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        '{"name": "server-filesystem", "version": "1.0.0", "bin": {"server-filesystem": "run.js"}}'
    )
    (package / "run.js").write_text(
        f"#!/usr/bin/env node\nrequire('fs').writeFileSync({str(marker)!r}, process.cwd())\n"
    )
    (package / "run.js").chmod(0o755)
    (workspace / "node_modules" / ".bin").mkdir()
    (workspace / "node_modules" / ".bin" / "server-filesystem").symlink_to(
        "../server-filesystem/run.js"
    )
    entry = {
        "command": "npx",
        "args": ["-y", "server-filesystem", "."],
        "env": {"npm_config_offline": "true"},  # the registry's copy is not the point here
        "timeout": 20,
    }
    manager = await connect(workspace, {"fs": entry})
    try:
        assert not marker.exists(), marker.read_text()
    finally:
        await manager.close()


async def test_a_cwd_setting_and_a_projects_own_servers_still_start_where_they_say(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "sub").mkdir()
    write_config(workspace / ".vis" / "mcp.json", {"proj": stdio_entry()})
    manager = await connect(workspace, {"mine": stdio_entry(cwd="sub")}, trusted=True)
    try:
        mine, proj = manager.get("mine"), manager.get("proj")
        assert mine is not None and proj is not None
        assert mine.state is State.CONNECTED and proj.state is State.CONNECTED
        assert f"fixture server starting in {workspace / 'sub'}" in mine.stderr_tail().splitlines()
        assert f"fixture server starting in {workspace}" in proj.stderr_tail().splitlines()
    finally:
        await manager.close()


async def test_a_relative_command_names_where_the_server_starts(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    plant(workspace / "serve.py", marker)
    manager = await connect(workspace, {"fix": {"command": "./serve.py"}})
    try:
        conn = manager.get("fix")
        assert conn is not None and conn.state is State.FAILED
        assert not marker.exists(), marker.read_text()
        assert conn.error is not None
        assert "'./serve.py': no such command or file" in conn.error
        assert str(start_folder()) in conn.error and '"cwd"' in conn.error
    finally:
        await manager.close()


async def test_a_missing_cwd_is_said_to_be_missing_not_the_command(workspace: Path) -> None:
    """A ``cwd`` naming no folder was reported as a command not found ("give the command's
    full path, or a "cwd""), though the command was a full path and the cwd was the fault."""
    (workspace / "a-file").write_text("")
    servers = {"gone": stdio_entry(cwd="no/such/folder"), "file": stdio_entry(cwd="a-file")}
    program = servers["gone"]["command"]
    manager = await connect(workspace, servers)
    try:
        gone, file = manager.get("gone"), manager.get("file")
        assert gone is not None and gone.state is State.FAILED
        assert gone.error == (
            f'cannot start {program!r}: its "cwd" {workspace / "no/such/folder"} does not exist'
        )
        assert file is not None and file.state is State.FAILED
        assert (
            file.error
            == f'cannot start {program!r}: its "cwd" {workspace / "a-file"} is not a folder'
        )
    finally:
        await manager.close()


async def test_a_command_value_runs_outside_the_workspace(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)  # where Vis runs
    marker = tmp_path / "marker"
    plant(workspace / "fixture-token", marker)
    real = real_server_bin(tmp_path / "real-bin")
    where = tmp_path / "where"
    (real / "fixture-token").write_text(f"#!/bin/sh\npwd > '{where}'\necho abc\n")
    (real / "fixture-token").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([".", str(real), os.environ["PATH"]]))
    entry = stdio_entry(env={"TOKEN": "!fixture-token"})
    manager = await connect(workspace, {"fix": entry})
    try:
        conn = manager.get("fix")
        assert conn is not None
        assert not marker.exists(), marker.read_text()
        assert conn.state is State.CONNECTED, (conn.error, conn.stderr_tail())
        assert where.read_text().strip() == str(start_folder())
    finally:
        await manager.close()


def test_path_outside_keeps_only_absolute_folders_outside_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    (root / "bin").mkdir(parents=True)
    (tmp_path / "link").symlink_to(root / "bin")
    value = os.pathsep.join(
        ["", ".", "node_modules/.bin", str(root / "bin"), str(tmp_path / "link"),
         f"{root}/../checkout/bin", "/usr/bin", "/usr/bin", "/bin"]
    )  # fmt: skip
    assert path_outside(value, [root]) == os.pathsep.join(["/usr/bin", "/bin"])
    # started in home (or above it): the person's own folders there stay
    home = Path.home()
    inside_home = str(home / ".local" / "bin")
    assert path_outside(os.pathsep.join([".", inside_home]), [home]) == inside_home


# A fresh process where the SDK never arrives (its import fails): a server whose command is
# missing, as a connection sees it.
WITHOUT_SDK = """
import asyncio, importlib.abc, sys
from pathlib import Path

class _NoSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types"):
            raise ImportError("the SDK is still being imported")
        return None

sys.meta_path.insert(0, _NoSdk())
from vis_core.mcp.client import ServerConnection
from vis_core.mcp.config import Source, parse_entry
from vis_core.mcp.logfile import McpLog

async def main():
    folder = Path(sys.argv[1])
    entry = {"command": sys.argv[2]}
    config = parse_entry("typo", entry, source=Source.USER, origin=str(folder / "mcp.json"))
    conn = ServerConnection(config, workspace=folder, mcp_log=McpLog(folder / "mcp.log"))
    conn.start()
    await conn.wait_ready(None)
    print(conn.state.value)
    print(conn.error)

asyncio.run(main())
"""


def test_a_missing_command_fails_before_the_sdk_is_imported(
    workspace: Path, vis_home: Path
) -> None:
    """A command that does not exist was found only when the SDK spawned it, after its import
    (a second and more of CPU): `vis run` on a loaded machine ended with the server 'still
    connecting'. Now it fails at once, saying where it was looked for, whatever the SDK: a
    PATH by its first three folders and how many more (it printed the whole of it, dozens of
    the person's folders for the transcript and the model)."""
    folders = [f"/opt/tool{n}/bin" for n in range(40)]
    path = {"PATH": os.pathsep.join(folders)}
    done = fresh_python(
        WITHOUT_SDK, str(workspace), "no-such-mcp-server", vis_home=vis_home, env=path
    )
    state, error, *_ = [*done.stdout.splitlines(), "", ""]
    assert state == "failed", done.stdout + done.stderr[-2000:]
    assert error.startswith(
        "cannot start 'no-such-mcp-server': no such command in the server's PATH "
        "(/opt/tool0/bin, /opt/tool1/bin, /opt/tool2/bin and 37 more folders) (your servers "
    ), error
    assert "/opt/tool3/bin" not in error, error
    absolute = str(workspace / "gone")
    done = fresh_python(WITHOUT_SDK, str(workspace), absolute, vis_home=vis_home)
    assert done.stdout.splitlines()[1:] == [
        f"cannot start {absolute!r}: no such command or file (looked for {absolute})"
    ], done.stdout + done.stderr[-2000:]


async def test_an_entry_whose_path_keeps_no_folder_is_checked_with_that_path(
    workspace: Path,
) -> None:
    """An entry's PATH of workspace folders only is left empty, and the server starts with
    that; the command was looked up on Vis's own PATH instead, so ``sh`` passed the check and
    the server then failed to start, saying nothing of why. Now it fails at once: the empty
    PATH holds no such command."""
    entry = {"command": "sh", "args": ["-c", "exit 0"], "env": {"PATH": str(workspace / "bin")}}
    manager = await connect(workspace, {"bare": entry})
    try:
        server = manager.get("bare")
        assert server is not None and server.state is State.FAILED
        assert (server.error or "").startswith(
            "cannot start 'sh': no such command: the server's PATH is empty"
        ), server.error
    finally:
        await manager.close()


async def test_a_relative_command_is_found_from_the_entrys_cwd(
    workspace: Path, tmp_path: Path
) -> None:
    """``"command": "bin/serve", "cwd": "tool"`` starts ``tool/bin/serve``, as the SDK would;
    one not there is said to be looked for there."""
    real_server_bin(workspace / "tool")
    there = {"command": "./fixture-mcp", "cwd": "tool"}
    missing = {"command": "bin/fixture-mcp", "cwd": "tool"}
    manager = await connect(workspace, {"there": there, "missing": missing})
    try:
        found, gone = manager.get("there"), manager.get("missing")
        assert found is not None and found.state is State.CONNECTED, found and found.error
        assert gone is not None and gone.state is State.FAILED
        looked = workspace / "tool" / "bin/fixture-mcp"
        assert gone.error == (
            f"cannot start 'bin/fixture-mcp': no such command or file (looked for {looked}) "
            f"(your servers start in {start_folder()}, not in the workspace, with a PATH that "
            "leaves out the workspace's folders: give the command's full path, or a \"cwd\" "
            "in mcp.json)"
        )
    finally:
        await manager.close()


async def test_a_command_that_is_not_executable_says_so(workspace: Path, tmp_path: Path) -> None:
    """A file without its executable bit was reported as 'no such command or file'."""
    server = tmp_path / "server.py"
    server.write_text("print('never run')\n")
    manager = await connect(workspace, {"plain": {"command": str(server)}})
    try:
        conn = manager.get("plain")
        assert conn is not None and conn.state is State.FAILED
        assert conn.error == (
            f"cannot start {str(server)!r}: {server} is not executable (make it so with "
            "chmod +x, or start it with its interpreter)"
        )
    finally:
        await manager.close()


async def test_an_executable_file_that_is_no_program_says_so(
    workspace: Path, tmp_path: Path
) -> None:
    """A file with its executable bit that is no program failed only once the SDK had started
    it, as "the server process ended before it answered initialize" (the keeper's exec error
    in the server's log alone): a text file (ENOEXEC), a script whose first line names an
    interpreter that is not there (ENOENT, as if the script were missing) or not executable,
    or a program `env` does not find. Now each fails at once, saying what is wrong with it;
    a script whose interpreter (and env's program) is there still starts."""
    files = {
        "text": "just some notes\n",
        "gone": "#!/no/such/python3 -u\nprint('never run')\n",
        "crlf": "#!/bin/sh\r\necho hi\r\n",
        "plain": f"#!{tmp_path / 'notes'}\n",
        "bare": "#!\n",
        "envgone": "#!/usr/bin/env no-such-interpreter\n",
        "works": f"#!/usr/bin/env sh\nexec {shlex.join(warm(SERVER, 'stdio'))}\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    (tmp_path / "notes").write_text("not a program")
    manager = await connect(workspace, {name: {"command": str(tmp_path / name)} for name in files})
    try:
        said = {}
        for name in files:
            conn = manager.get(name)
            assert conn is not None, name
            assert (conn.state is State.CONNECTED) == (name == "works"), (name, conn.error)
            said[name] = conn.error
    finally:
        await manager.close()
    wrong = {name: f"cannot start {str(tmp_path / name)!r}: {tmp_path / name} is not a program "
             "Vis can run: " for name in files}  # fmt: skip
    assert said.pop("envgone").startswith(
        wrong["envgone"] + "its first line runs 'no-such-interpreter' with env: no such command "
        "in the server's PATH ("
    )
    notes = str(tmp_path / "notes")
    assert said == {
        "text": wrong["text"] + "a text file, with no first line such as #!/bin/sh naming its "
        "interpreter",
        "gone": wrong["gone"] + "its first line names the interpreter '/no/such/python3', which "
        "does not exist",
        "crlf": wrong["crlf"] + "its first line names the interpreter '/bin/sh\\r', which does "
        "not exist (the file has Windows line endings)",
        "plain": wrong["plain"] + f"its first line names the interpreter {notes!r}, which is not "
        "executable",
        "bare": wrong["bare"] + "its first line, #!, names no interpreter",
        "works": None,
    }, said
