"""``vis`` started warm (``warm_servers.vis_command``) behaves as ``python -m vis_core.cli``: a
module run with ``-m`` from the ``vis`` fork server reports the same as it does run cold, in the
test's environment, folder and descriptors, and ends the same way (exit status, signal death,
its threads and exit functions); a signal to the launcher reaches it alone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import script, vis
from processes import alive
from warm_servers import LAUNCHER, VIS, _socket_path, vis_command

PROBE = """
import dataclasses, json, locale, os, sys, tempfile, threading, atexit

import vis_core.cli  # noqa: F401 (imported as Vis's own code imports it: a second module)
from vis_core import codegen_cache

def stream(s):
    if s is None:
        return None
    return [s.fileno(), s.isatty(), s.encoding, s.errors, s.line_buffering, s.write_through]

report = {
    "argv": sys.argv,
    "main": __name__,
    "path0": sys.path[0],
    "cwd": os.getcwd(),
    "env": {k: os.environ.get(k) for k in ("VIS_HOME", "HOME", "TMPDIR", "WHO")},
    "tmp": tempfile.gettempdir(),
    "cache installed before": "exec" in vars(dataclasses),
    "installed": codegen_cache.install(),
    "cache": str(codegen_cache._Cache.path),
    "cli": sorted(k for k in sys.modules if k in ("__main__", "vis_core.cli")),
    "streams": [stream(s) for s in (sys.stdin, sys.stdout, sys.stderr)],
    "stdin": sys.stdin.read() if sys.stdin else None,
    "umask": os.umask(0o22),
    "threads": threading.active_count(),
    "locale": locale.setlocale(locale.LC_CTYPE),
    "exec": sys.executable,
}
print(json.dumps(report), flush=True)
print("unflushed at exit", end="")
how = sys.argv[1]
if how == "term":
    os.kill(os.getpid(), 15)
threading.Thread(target=lambda: print(" a thread's last words", end="")).start()
atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
if how == "exit":
    sys.exit(int(sys.argv[2]))
if how == "say":
    sys.exit("said on stderr")
if how == "raise":
    raise ValueError("uncaught")
if how == "interrupt":
    raise KeyboardInterrupt
"""


def _both(
    tmp_path: Path, *args: str, **kw: object
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The probe run cold (``python -m probe``) and warm, alike."""
    (tmp_path / "probe.py").write_text(PROBE)
    env = {
        **os.environ,
        "VIS_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "WHO": "the test's",
    }
    warm = [sys.executable, "-I", "-S", str(LAUNCHER), _socket_path(VIS), "-m", "probe", *args]
    done = []
    for command in ([sys.executable, "-m", "probe", *args], warm):
        old = os.umask(0o27)
        try:
            done.append(
                subprocess.run(
                    command,
                    cwd=tmp_path,
                    env=env,
                    text=True,
                    timeout=120,
                    **kw,  # type: ignore[arg-type]
                )
            )
        finally:
            os.umask(old)
    return done[0], done[1]


def test_a_warm_module_sees_its_own_environment_folder_streams_and_caches(
    tmp_path: Path,
) -> None:
    cold, warm = _both(tmp_path, "exit", "0", input="from stdin", capture_output=True)
    assert (warm.returncode, warm.stderr) == (cold.returncode, cold.stderr) == (0, "atexit ran\n")
    assert warm.stdout == cold.stdout
    report = json.loads(warm.stdout.splitlines()[0])
    assert report["env"]["WHO"] == "the test's" and report["tmp"] == str(tmp_path)
    assert report["cache"].startswith(str(tmp_path / "home" / "cache"))  # its own VIS_HOME's
    assert not report["cache installed before"] and report["installed"]
    assert report["argv"] == [str(tmp_path / "probe.py"), "exit", "0"]
    assert report["path0"] == str(tmp_path) and report["cwd"] == str(tmp_path)
    assert report["stdin"] == "from stdin" and report["threads"] == 1
    assert warm.stdout.endswith("unflushed at exit a thread's last words")

    with (tmp_path / "out").open("w") as out:  # a file, DEVNULL and no stdin at all
        cold, warm = _both(tmp_path, "exit", "0", stdin=subprocess.DEVNULL, stdout=out)
    assert warm.returncode == cold.returncode == 0
    first, second = (tmp_path / "out").read_text().split("words")[:2]
    assert json.loads(first.splitlines()[0]) == json.loads(second.splitlines()[0])


@pytest.mark.parametrize(
    ("how", "status"),
    [
        (("exit", "3"), 3),
        (("say",), 1),
        (("raise",), 1),
        (("interrupt",), -signal.SIGINT),
        (("term",), -signal.SIGTERM),
    ],
)
def test_a_warm_module_ends_as_a_cold_one(
    tmp_path: Path, how: tuple[str, ...], status: int
) -> None:
    cold, warm = _both(tmp_path, *how, capture_output=True)
    assert warm.returncode == cold.returncode == status
    assert warm.stdout == cold.stdout
    assert _from_the_probe(warm.stderr) == _from_the_probe(cold.stderr)


def _from_the_probe(stderr: str) -> str:
    """``stderr`` from the traceback's first line in the probe (the frames above it are
    ``runpy``'s in a cold process, the fork server's and ``runpy``'s in a warm one)."""
    lines = stderr.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if "probe.py" in line), 0)
    return "".join(lines[start:])


def test_a_signal_to_the_launcher_reaches_vis_alone_and_it_ends_as_a_cold_vis_does(
    tmp_path: Path, workspace: Path, vis_home: Path
) -> None:
    """SIGINT to a warm ``vis run`` in a block: it cancels the turn and exits 130, as a cold
    one does (the block's process group gets no signal of its own)."""
    waiting = "open('started', 'w').close()\nimport asyncio\nawait asyncio.sleep(300)"
    path = script(tmp_path, [{"code": waiting}, {"text": "done"}])
    env = {**os.environ, "VIS_HOME": str(vis_home)}
    endings = []
    for command in (
        [sys.executable, "-m", "vis_core.cli"],
        vis_command(env=env),
    ):
        (workspace / "started").unlink(missing_ok=True)
        proc = subprocess.Popen(
            [*command, "run", "--provider", "scripted", "--script", str(path), "go"],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not (workspace / "started").exists():
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
            proc.wait()
        endings.append((proc.returncode, re.sub(r"\d+\.\ds", "N s", out), err.splitlines()[-1:]))
    assert endings[0] == endings[1]


def test_the_warm_vis_dies_with_its_launcher(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(
        "import os, pathlib, time\npathlib.Path('pid').write_text(str(os.getpid()))\n"
        "time.sleep(300)\n"
    )
    launcher = subprocess.Popen(
        [sys.executable, "-I", "-S", str(LAUNCHER), _socket_path(VIS), "-m", "probe"],
        cwd=tmp_path,
    )
    pidfile = tmp_path / "pid"
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text()):
        assert time.monotonic() < deadline, "the warm module did not start"
        time.sleep(0.01)
    launcher.kill()
    launcher.wait()
    pid = int(pidfile.read_text())
    while alive(pid):
        assert time.monotonic() < deadline, "the warm module outlived its launcher"
        time.sleep(0.01)


def test_what_python_reads_at_its_start_runs_vis_cold(vis_home: Path) -> None:
    """An environment that sets ``PYTHON*`` or the locale otherwise than the fork server's
    gets a cold ``vis`` (a warm one's interpreter started with the fork server's)."""
    assert vis_command("doctor")[1:4] == ["-I", "-S", str(LAUNCHER)]
    for change in ({"PYTHONPROFILEIMPORTTIME": "1"}, {"LC_ALL": "C"}, {"PYTHONUTF8": "0"}):
        assert vis_command("doctor", env={**os.environ, **change})[1:3] == ["-m", "vis_core.cli"]


def test_vis_run_warm_and_cold_say_the_same(
    tmp_path: Path, workspace: Path, vis_home: Path
) -> None:
    """A block runs in the sandbox child the warm ``vis`` starts, as in a cold one's."""
    path = script(tmp_path, [{"code": "print(6 * 7)"}, {"text": "done"}])
    args = ("run", "--json", "--provider", "scripted", "--script", str(path), "go")
    cold = vis(*args, cwd=workspace, env_home=vis_home, cold=True)
    warm = vis(*args, cwd=workspace, env_home=vis_home)
    assert warm.returncode == cold.returncode == 0, warm.stderr
    kinds = [json.loads(line)["type"] for line in warm.stdout.splitlines()]
    assert kinds == [json.loads(line)["type"] for line in cold.stdout.splitlines()]
    assert "42" in warm.stdout
