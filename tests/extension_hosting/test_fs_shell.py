"""``vis.fs`` operations and ``vis.shell`` / ``vis.jailed_shell`` handles."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest

import vis_core.extension as vis


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_fs_operations_start_at_the_working_copy(cwd: Path) -> None:
    fs = vis.fs
    assert fs.write("a/b.txt", "hello") == 5
    assert (cwd / "a" / "b.txt").read_text() == "hello"
    assert fs.read("a/b.txt") == b"hello" and fs.read_text(cwd / "a" / "b.txt") == "hello"
    fs.copy("a/b.txt", "c/copy.txt")
    fs.copy("a", "a2")
    fs.move("c/copy.txt", "moved.txt")
    assert fs.list(".") == ["a", "a2", "c", "moved.txt"]
    info = fs.stat("moved.txt")
    assert (info["size"], info["is_file"], info["is_dir"]) == (5, True, False)
    fs.mkdir("deep/er")
    fs.remove("moved.txt")
    fs.remove("c")
    with pytest.raises(OSError):
        fs.remove("a2")  # not empty
    fs.remove("a2", recursive=True)
    assert fs.list() == ["a", "deep"]


def test_shell_handle_types_waits_and_logs(cwd: Path) -> None:
    sh = vis.shell(
        {
            "command": "read name; echo hello $name; echo oops >&2; exit 3",
            "cwd": "",
            "env": {"GREETING": "hi"},
        }
    )
    sh.type("world\n")
    status = sh.wait(30)
    assert (status.running, status.exit_code) == (False, 3)
    assert "hello world" in sh.logs() and "oops" in sh.logs()
    assert sh.stdout() == "hello world\n" and sh.stderr() == "oops\n"


def test_shell_cwd_and_env_and_stop(cwd: Path) -> None:
    (cwd / "sub").mkdir()
    done = vis.shell(
        {"command": ["sh", "-c", 'pwd; echo "$GREETING"'], "cwd": "sub", "env": {"GREETING": "hi"}}
    ).wait(30)
    assert done.output.splitlines() == [str(cwd / "sub"), "hi"]
    sleeper = vis.shell("sleep 30")
    with pytest.raises(TimeoutError, match="still running"):
        sleeper.wait(0.2)
    assert sleeper.running
    stopped = sleeper.stop()
    assert stopped.stopped and not sleeper.running


def test_output_is_drained_into_8_mib_buffers(cwd: Path) -> None:
    # 12 MiB on stdout: the child never blocks on a full pipe while we wait
    sh = vis.shell({"command": "head -c 12582912 /dev/zero | tr '\\0' x; echo; echo end"})
    status = sh.wait(60)
    assert status.exit_code == 0
    logs = sh.logs()
    assert logs.startswith("[") and "dropped from the 8 MiB buffer" in logs.splitlines()[0]
    assert logs.rstrip().endswith("end")
    assert len(sh.stdout().encode()) <= 8 * 1024 * 1024


def test_shell_rejects_bad_specs(cwd: Path) -> None:
    with pytest.raises(ValueError, match="unknown option allow_read_write"):
        vis.shell({"command": "true", "allow_read_write": "/tmp/x"})
    with pytest.raises(ValueError, match="'command'"):
        vis.shell({"cwd": "."})
    with pytest.raises(NotADirectoryError):
        vis.shell({"command": "true", "cwd": "missing"})
    for timeout in (0, -1, float("nan"), "30", True):  # NaN passed: it compares false
        with pytest.raises(ValueError, match="'timeout' must be a positive number of seconds"):
            vis.shell({"command": "true", "timeout": timeout})


def test_jailed_shell_without_the_jail_ignores_its_options(cwd: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    sh = vis.jailed_shell({"command": f"echo free > {outside}", "allow_read_write": str(outside)})
    assert sh.wait(30).exit_code == 0 and not sh.jailed
    assert outside.read_text() == "free\n"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_jailed_shell_confines_and_adds_exactly_the_given_paths(
    cwd: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")  # re-read at every spawn
    probe = vis.jailed_shell("true")
    if probe.wait(30).exit_code != 0:
        pytest.skip(f"bubblewrap cannot create namespaces here: {probe.logs()}")
    assert probe.jailed
    shared = tmp_path / "shared"
    shared.mkdir()
    fifo = shared / "granted.txt"
    fifo.write_text("")
    denied = shared / "denied.txt"
    socket_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(socket_path))
    server.listen(1)
    got: list[bytes] = []

    def accept() -> None:
        conn, _ = server.accept()
        got.append(conn.recv(100))
        conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    sh = vis.jailed_shell(
        {
            "command": (
                f"echo inside > {cwd}/in.txt; echo granted > {fifo}; "
                f"(echo nope > {denied}) 2>/dev/null; "
                f'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); '
                f"s.connect('{socket_path}'); s.sendall(b'ping')\""
            ),
            "allow_read_write": [str(fifo)],
            "unix_connect": str(socket_path),
        }
    )
    status = sh.wait(30)
    thread.join(10)
    server.close()
    assert status.exit_code == 0, sh.logs()
    assert (cwd / "in.txt").read_text() == "inside\n"
    assert fifo.read_text() == "granted\n"
    assert not denied.exists()  # a neighbour of the granted file stays out of reach
    assert got == [b"ping"]


GRANTED = '''
import vis_core.extension as vis


def read_tool() -> str:
    """Read the toolchain file from a jailed child."""
    sh = vis.jailed_shell({"command": "cat TOOLCHAIN/tool.txt && echo more > TOOLCHAIN/new.txt"})
    status = sh.wait(30)
    return f"{status.exit_code}:{sh.stdout().strip()}"


vis.register_extension(vis.Extension(
    name=NAME, description="Uses a toolchain.", alias=NAME, symbols=[vis.Symbol(read_tool)],
    grants=GRANTS,
))
'''


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_grants_reach_only_the_declaring_extensions_jailed_children(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    from .harness import code_turn, install_extension, open_host, run_turn, write_script

    toolchain = tmp_path / "toolchain"
    toolchain.mkdir()
    (toolchain / "tool.txt").write_text("jdk 21\n")

    def source(name: str, grants: str) -> str:
        return (
            GRANTED.replace("TOOLCHAIN", str(toolchain))
            .replace("read_tool", f"read_{name}")
            .replace("NAME", repr(name))
            .replace("GRANTS", grants)
        )

    install_extension(
        vis_home,
        "granted",
        source("granted", f"[vis.Grant({str(toolchain)!r}, reason='Run the tool.')]"),
    )
    install_extension(vis_home, "plain", source("plain", "[]"))
    script = write_script(
        tmp_path / "script.yaml",
        code_turn("print(await read_granted())", "print(await plain.read_plain())"),
    )
    host = await open_host(workspace, script)
    (vis_home / "config.toml").write_text("jail = true\n")  # only the spawns read it again
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    granted, plain = (b.stdout.strip() for b in outcome.blocks)
    # read-only: the file reads, the write fails; the other extension sees nothing
    assert granted == "1:jdk 21"
    assert not (toolchain / "new.txt").exists()
    assert plain == "1:"
