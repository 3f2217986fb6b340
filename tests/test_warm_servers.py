"""A test server started warm (``warm_servers.py``) looks like one process to whoever starts it:
it gets the launcher's argv, environment, cwd and descriptors; the launcher ends as it did, a
signal to the launcher reaches it, and it dies with the launcher."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from processes import alive
from warm_servers import LAUNCHER, command

ECHO = """
import os, sys
print(sys.argv[1:], os.environ.get("WHO"), os.getcwd(), sys.path[0] == os.path.dirname(__file__))
os.write(int(sys.argv[1]), b"through the handed descriptor")
sys.stderr.write(sys.stdin.read())
sys.exit(int(sys.argv[2]))
"""
WAIT = """
import os, signal, sys, time
from pathlib import Path
if sys.argv[1] == "term":
    signal.signal(signal.SIGTERM, lambda *_: (print("got SIGTERM", flush=True), sys.exit(5)))
Path(sys.argv[2]).write_text(str(os.getpid()))
while True:
    time.sleep(60)
"""


def _until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _started(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], int]:
    script = tmp_path / "wait.py"
    script.write_text(WAIT)
    pidfile = tmp_path / f"{mode}-{time.monotonic_ns()}.pid"
    launcher = subprocess.Popen(
        command(script, mode, str(pidfile)), stdout=subprocess.PIPE, text=True
    )
    _until(lambda: pidfile.exists() and pidfile.read_text(), "the server did not start")
    return launcher, int(pidfile.read_text())


def test_the_server_gets_argv_environment_cwd_and_descriptors_and_its_status_is_the_launchers(
    tmp_path: Path,
) -> None:
    script = tmp_path / "echo.py"
    script.write_text(ECHO)
    (tmp_path / "here").mkdir()
    read, write = os.pipe()
    try:
        done = subprocess.run(
            command(script, str(write), "7"),
            input="from stdin",
            capture_output=True,
            text=True,
            cwd=tmp_path / "here",
            env={"WHO": "the launcher's", "PATH": os.environ["PATH"]},
            pass_fds=[write],
            timeout=120,
        )
        os.close(write)
        with os.fdopen(read, "rb") as reader:
            handed = reader.read()
    finally:
        for fd in (read, write):
            try:
                os.close(fd)
            except OSError:
                pass  # closed above
    assert done.returncode == 7, done.stderr
    assert done.stdout == f"['{write}', '7'] the launcher's {tmp_path / 'here'} True\n"
    assert done.stderr == "from stdin"
    assert handed == b"through the handed descriptor"


def test_a_signal_to_the_launcher_reaches_the_server_and_the_launcher_ends_as_it_did(
    tmp_path: Path,
) -> None:
    launcher, server = _started(tmp_path, "term")
    launcher.terminate()
    assert launcher.wait(60) == 5
    assert launcher.stdout is not None and launcher.stdout.read() == "got SIGTERM\n"
    _until(lambda: not alive(server), "the server outlived its launcher")

    launcher, server = _started(tmp_path, "default")
    launcher.terminate()
    assert launcher.wait(60) == -signal.SIGTERM
    _until(lambda: not alive(server), "the server outlived its launcher")


def test_the_server_dies_with_its_launcher_and_the_launcher_with_the_server(
    tmp_path: Path,
) -> None:
    launcher, server = _started(tmp_path, "default")
    launcher.kill()  # as Vis ends a stdio server's process group
    launcher.wait(60)
    _until(lambda: not alive(server), "the server outlived its launcher's SIGKILL")

    launcher, server = _started(tmp_path, "default")
    os.kill(server, signal.SIGKILL)  # as a test kills a server from outside
    assert launcher.wait(60) == -signal.SIGKILL


def test_a_launcher_that_cannot_reach_the_fork_server_fails_loudly(tmp_path: Path) -> None:
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(LAUNCHER), str(tmp_path / "no-socket"), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 1
    assert "warm_launcher: cannot reach the fork server of the test servers" in done.stderr
    assert not (tmp_path / "ran").exists()
