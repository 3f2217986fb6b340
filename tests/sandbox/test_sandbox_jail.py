"""The bubblewrap jail: argv shape, refusal without bwrap, and real confinement when it runs."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from vis_core.sandbox import Sandbox
from vis_core.system.jail import jail_argv, refuse_hard_links
from vis_core.system.jail_check import JailUnavailable, jail_problem
from vis_core.system.process import ChildProcess

from .conftest import HostTools, MakeSandbox


def _bwrap_problem() -> str | None:
    """Why bwrap cannot confine anything here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    return jail_problem()


def _no_bwrap_path(tmp_path: Path) -> str:
    """A PATH with the directories of python and git but without bwrap."""
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir()
    return str(folder)


def test_jail_argv_binds_workspace_and_hides_home(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    jail_problem()  # Vis's check of the real bwrap, done once, before PATH names a fake one
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    argv = jail_argv(["python", "-c", "pass"], workspace)
    assert argv[0] == str(fake / "bwrap")
    joined = " ".join(argv)
    assert "--ro-bind / /" not in joined  # only the system folders: no socket of /run, /var
    assert "--ro-bind /usr /usr" in joined
    assert f"--tmpfs {home.resolve()}" in joined
    assert f"--bind {workspace.resolve()} {workspace.resolve()}" in joined
    for flag in (
        "--unshare-net",
        "--unshare-pid",
        "--unshare-user",
        "--cap-drop ALL",
        "--new-session",
        "--die-with-parent",
        "--proc /proc",
        "--dev /dev",
    ):
        assert flag in joined
    assert argv[-4:] == ["--", "python", "-c", "pass"]
    # the workspace is bound after the tmpfs mounts that would otherwise hide it
    assert joined.index("--tmpfs") < joined.index(f"--bind {workspace.resolve()}")


def test_jail_argv_refuses_without_bwrap(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", _no_bwrap_path(tmp_path))
    with pytest.raises(JailUnavailable) as caught:
        jail_argv(["true"], workspace)
    assert isinstance(caught.value, RuntimeError)
    text = str(caught.value)
    assert "bubblewrap" in text and "apt-get install bubblewrap" in text
    assert "dnf install bubblewrap" in text


async def test_jailed_sandbox_refuses_to_run_unconfined(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workspace: Path
) -> None:
    monkeypatch.setenv("PATH", _no_bwrap_path(tmp_path))
    box = make_sandbox(jail=True)
    marker = workspace / "ran.txt"
    result = await box.run(f"open({str(marker)!r}, 'w').write('ran')")
    assert result.error is not None
    assert "apt-get install bubblewrap" in result.error
    assert not marker.exists()
    assert box._proc is None


async def test_the_jail_is_set_up_and_its_child_started_off_the_loop(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    """The jail's set-up checks up to 2,000 protected files for a second name, and the start
    waits for the fork: on the loop, the first block froze keys and drawing (~0.2 s). Both run
    in a thread, the check still before anything starts: a git hook's hard link refuses the
    block."""
    problem = _bwrap_problem()
    if problem is not None:
        pytest.skip(problem)
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    protected = workspace / ".git" / "hooks" / "pre-commit"
    protected.write_text("")
    os.link(protected, workspace / "notes.txt")
    watched = {refuse_hard_links.__code__, ChildProcess.__init__.__code__}
    on_loop: list[str] = []

    def profile(frame: object, event: str, arg: object) -> None:
        code = getattr(frame, "f_code", None)
        if event == "call" and code in watched:
            on_loop.append(getattr(code, "co_name", ""))

    box = make_sandbox(jail=True)
    sys.setprofile(profile)  # this thread's calls: the loop's
    try:
        refused = await box.run("print('ran')")
        (workspace / "notes.txt").unlink()
        ran = await box.run("print('ran')")
    finally:
        sys.setprofile(None)
    assert refused.error is not None and f"{protected}: it has another name" in refused.error
    assert refused.stdout == ""
    assert ran.error is None, ran.error
    assert ran.stdout == "ran\n"
    assert on_loop == []


async def test_a_hard_link_a_block_makes_to_a_control_file_does_not_stop_later_blocks(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    """One block's ``os.link('z', '.env.z')`` made every block of every later session fail
    ("has another name (a hard link…)"), and the advice copied through a fixed name in the
    shared /tmp. Now the jail goes on (Vis does not load ``.env.z``: see
    tests/extensions/test_control_file_links.py); a git hook's second name still refuses,
    with advice that names only the hook's own folder, quoted for the shell."""
    problem = _bwrap_problem()
    if problem is not None:
        pytest.skip(problem)
    box = make_sandbox(jail=True)
    made = await box.run("open('z', 'w').write('A=1\\n')\nimport os\nos.link('z', '.env.z')")
    assert made.error is None, made.error
    assert os.stat(workspace / ".env.z").st_nlink == 2
    later = make_sandbox(jail=True)
    ran = await later.run("open('.env.z', 'a').write('B=2\\n')")  # still read-only by this name
    assert ran.error is not None and "Read-only file system" in ran.error
    assert (workspace / ".env.z").read_text() == "A=1\n"

    hook = workspace / ".git" / "hooks" / "it's"
    hook.parent.mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    hook.write_text("")
    os.link(hook, workspace / "hook-copy")
    refused = await make_sandbox(jail=True).run("print('ran')")
    assert refused.error is not None and "/tmp/x" not in refused.error
    quoted = "'" + str(hook).replace("'", "'\"'\"'") + "'"
    assert f"cp -p {quoted} " in refused.error and refused.stdout == ""


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A host folder outside /tmp (which the jail replaces) and outside the workspace."""
    folder = Path(tempfile.mkdtemp(prefix="vis-jail-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_jailed_sandbox_confines_files_and_network(
    make_sandbox: MakeSandbox,
    workspace: Path,
    tmp_path: Path,
    outside_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    problem = _bwrap_problem()
    if problem:
        pytest.skip(problem)
    home = outside_dir / "home"
    home.mkdir()
    (home / "secret.txt").write_text("token")
    monkeypatch.setenv("HOME", str(home))
    system_file = outside_dir / "system.txt"
    tmp_file = tmp_path / "outside.txt"
    box: Sandbox = make_sandbox(jail=True)
    result = await box.run(
        "import os, socket\n"
        "open('inside.txt', 'w').write('ok')\n"
        "print(os.getcwd())\n"
        f"for target in ({str(system_file)!r}, {str(tmp_file)!r}):\n"
        "    try:\n"
        "        open(target, 'w').write('escaped')\n"
        "        print('written')\n"
        "    except OSError as exc:\n"
        "        print(type(exc).__name__, exc.errno)\n"
        f"print(os.path.exists({str(home / 'secret.txt')!r}))\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
        "    print('network: open')\n"
        "except OSError:\n"
        "    print('network: blocked')\n"
        "print(await echo('tools still work'))\n"
    )
    assert result.error is None, result.error
    lines = result.stdout.splitlines()
    assert lines[0] == str(workspace.resolve())
    # the folder is not in the jail at all (ENOENT), or read-only (EROFS)
    assert lines[1] in ("OSError 2", "OSError 30"), lines
    assert not system_file.exists()
    assert lines[2] in ("written", "OSError 30")  # /tmp is a private tmpfs in the jail
    assert lines[3] == "False"  # home is hidden
    assert lines[4] == "network: blocked"
    assert "tools still work" in lines[5]
    assert (workspace / "inside.txt").read_text() == "ok"
    assert not system_file.exists() and not tmp_file.exists()


async def test_jailed_sandbox_interrupt_reaches_the_child(
    make_sandbox: MakeSandbox, host_tools: HostTools
) -> None:
    problem = _bwrap_problem()
    if problem:
        pytest.skip(problem)
    box = make_sandbox(jail=True)
    await box.run("kept = 1")
    task = asyncio.create_task(box.run("await echo('running')\nwhile True:\n    pass\n"))
    await host_tools.called("running")
    await box.interrupt()  # it answers once the block stopped, or its child was killed
    result = await task
    assert result.error is not None and result.error.rstrip().endswith("KeyboardInterrupt")
    after = await box.run("print(kept)")
    assert after.stdout == "1\n" and after.restarted is None


def test_a_grant_that_names_a_link_binds_the_link_path_too(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    problem = _bwrap_problem()
    if problem:
        pytest.skip(problem)
    home = tmp_path / "home"
    java = home / ".sdkman" / "candidates" / "java"
    (java / "21.0.2" / "bin").mkdir(parents=True)
    (java / "21.0.2" / "bin" / "javac").write_text("jdk 21\n")
    (java / "current").symlink_to("21.0.2")  # relative, as sdkman makes it
    (home / "jdk").symlink_to(java / "current")  # a link to a link
    (home / "secret.txt").write_text("private\n")
    cache = tmp_path / "cache-store"
    cache.mkdir()
    (home / ".m2").symlink_to(cache)
    monkeypatch.setenv("HOME", str(home))
    command = (
        f"cat {java}/current/bin/javac {home}/jdk/bin/javac && readlink {home}/jdk && "
        f"echo filled > {home}/.m2/new.txt && ls -A {home}; cat {home}/secret.txt"
    )
    argv = jail_argv(
        ["/bin/sh", "-c", command],
        workspace,
        read_only=(home / "jdk",),
        read_write=(home / ".m2",),
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    lines = done.stdout.splitlines()
    assert lines[:3] == ["jdk 21", "jdk 21", str(java / "current")], done.stderr
    assert (cache / "new.txt").read_text() == "filled\n"  # written through the link
    assert sorted(lines[3:]) == [".m2", ".sdkman", "jdk"]  # nothing else of home
    assert "No such file" in done.stderr and "private" not in done.stdout


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
@pytest.mark.parametrize("kind", ["device", "pipe"])
def test_a_checkouts_git_file_cannot_make_the_jail_read_without_end(
    workspace: Path, kind: str
) -> None:
    """A checkout's ``.git`` file names a folder whose ``commondir`` links to ``/dev/zero``
    (or is a named pipe): making the jail for each block read it on the host without end
    (until Vis ran out of memory) or blocked for good. Only a small regular file is read.
    (In a process with 1 GiB of address space and a time limit, so the failing read ends.)"""
    import os
    import sys
    import textwrap

    (workspace / ".git").write_text("gitdir: x\n")
    (workspace / "x").mkdir()
    if kind == "device":
        os.symlink("/dev/zero", workspace / "x" / "commondir")
    else:
        os.mkfifo(workspace / "x" / "commondir")
    program = textwrap.dedent(
        f"""
        import resource
        from pathlib import Path
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from vis_core.system.jail import jail_argv
        print(jail_argv(["true"], Path({str(workspace)!r}))[-1])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "true"


async def test_what_a_jailed_child_loads_on_first_use_passes_its_refusals(
    make_sandbox: MakeSandbox,
) -> None:
    """A tool's signature and pickle load when a block first needs them, after the jail's
    refusals are in place: Vis's own import of its internals passes them, the block's does
    not."""
    problem = _bwrap_problem()
    if problem:
        pytest.skip(problem)
    box = make_sandbox(jail=True)
    result = await box.run(
        "import inspect\nprint(inspect.signature(git.status))\nkept = {'a': 1}\n"
    )
    assert result.error is None, result.error
    assert result.stdout == "(path: str = '.', *, short=False)\n"
    refused = await box.run("import vis_core.contracts.introspect")
    assert refused.error is not None and "refused" in refused.error
    assert (await box.run("print(kept)")).stdout == "{'a': 1}\n"
