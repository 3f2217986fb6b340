"""The jail as a boundary, tried from inside as root and as an ordinary user: capabilities,
processes, unix sockets, git control files, Vis's runtime and home's dot files."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from vis_core.sandbox import Sandbox
from vis_core.sandbox.host import VIS_ROOT
from vis_core.system.jail import jail_argv

from .conftest import MakeSandbox
from .hostile import BWRAP_PROBLEM, make_repo

jailed = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))


def run_with_private_etc(program: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    """Run the Python ``program`` (as root) in a mount namespace of its own whose ``/etc`` is an
    overlay: the root-only files it makes there are seen by no other process (another test's
    jail scanning ``/etc`` would mask them and fail once they are gone)."""
    upper, work = scratch / "etc-upper", scratch / "etc-work"
    upper.mkdir()
    work.mkdir()
    mount = f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc"
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            f'{mount} || exit 99; exec "$0" -c "$1"',
            sys.executable,
            program,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode == 99:
        pytest.skip(f"no private overlay of /etc here: {done.stderr.strip()}")
    return done


# Each line says what one attack got: "<name> escaped" means the jail failed.
ATTACKS = r"""
vis_home="$1"; host_pid="$2"; run_sock="$3"; var_sock="$4"
umount "$vis_home" 2>/dev/null && echo "umount escaped" || echo "umount refused"
umount -l "$vis_home" 2>/dev/null
cat "$vis_home/secrets" 2>/dev/null && echo "secrets escaped" || echo "secrets hidden"
mount -o remount,rw / 2>/dev/null && echo "remount escaped" || echo "remount refused"
mount -t tmpfs none "$vis_home" 2>/dev/null && echo "mount escaped" || echo "mount refused"
unshare -Um sh -c "umount -l '$vis_home' && cat '$vis_home/secrets'" 2>/dev/null \
  && echo "nested escaped" || echo "nested refused"
grep -qs : /etc/shadow && echo "shadow escaped" || echo "shadow hidden"
kill -0 "$host_pid" 2>/dev/null && echo "signal escaped" || echo "signal refused"
echo "pids $(ls /proc | grep -c '^[0-9]')"
for sock in "$run_sock" "$var_sock"; do
  python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])" "$sock" \
    2>/dev/null && echo "socket escaped $sock" || echo "socket refused"
done
printf 'elsewhere\n' > .git/commondir 2>/dev/null && echo "commondir escaped" \
  || echo "commondir refused"
mv .git .git-moved 2>/dev/null && echo "rename escaped" || echo "rename refused"
echo "[core]" >> .git/config 2>/dev/null && echo "config escaped" || echo "config refused"
git init -q 2>/dev/null && echo "init escaped" || echo "init refused"
echo "ok" > inside.txt && echo "workspace writable"
"""


def _listening(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen(1)
    return server


@pytest.fixture
def places() -> Iterator[dict[str, Path]]:
    """A workspace (a git repository) and VIS_HOME inside it, both outside the test's own
    /tmp folder so an ordinary user can reach them; host sockets under /run and /var/tmp."""
    top = Path(tempfile.mkdtemp(prefix="vis-jail-", dir="/tmp"))
    os.chmod(top, 0o755)
    workspace = top / "workspace"
    workspace.mkdir()
    make_repo(workspace)
    vis_home = workspace / "vis-home"  # the worst place: inside the read-write workspace
    vis_home.mkdir()
    (vis_home / "secrets").write_text("sk-secret\n")
    tag = uuid.uuid4().hex[:8]
    run_dir = Path("/run") if os.access("/run", os.W_OK) else top
    sockets = [run_dir / f"vis-test-{tag}.sock", Path(f"/var/tmp/vis-test-{tag}.sock")]
    servers = [_listening(p) for p in sockets]
    try:
        yield {
            "top": top,
            "workspace": workspace,
            "vis_home": vis_home,
            "run": sockets[0],
            "var": sockets[1],
        }
    finally:
        for server in servers:
            server.close()
        for path in sockets:
            path.unlink(missing_ok=True)
        shutil.rmtree(top, ignore_errors=True)


def _attack(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch, user: int | None
) -> list[str]:
    monkeypatch.setenv("VIS_HOME", str(places["vis_home"]))
    monkeypatch.setenv("HOME", "/nonexistent-home")
    workspace = places["workspace"]
    (workspace / "attack.sh").write_text(ATTACKS)
    if user is not None:
        subprocess.run(["chown", "-R", str(user), str(places["top"])], check=True)
    argv = jail_argv(
        [
            "sh",
            "attack.sh",
            str(places["vis_home"]),
            str(os.getpid()),
            str(places["run"]),
            str(places["var"]),
        ],
        workspace,
    )
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        user=user,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _assert_held(lines: list[str], places: dict[str, Path]) -> None:
    assert not [line for line in lines if "escaped" in line], lines
    assert "workspace writable" in lines, lines
    assert int(next(x for x in lines if x.startswith("pids ")).split()[1]) <= 8, (
        lines
    )  # the jail's own, not the host's
    assert (places["workspace"] / ".git" / "HEAD").exists()
    assert not (places["workspace"] / ".git" / "commondir").exists()
    assert (places["vis_home"] / "secrets").read_text() == "sk-secret\n"


@jailed
def test_the_jail_holds_as_root(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("not root: the root case needs a run as root")
    _assert_held(_attack(places, monkeypatch, None), places)


@jailed
def test_the_jail_holds_as_an_ordinary_user(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch, plain_uid: int
) -> None:
    probe = subprocess.run(
        jail_argv(["true"], places["top"]),
        user=plain_uid,
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"bwrap cannot make namespaces as an ordinary user here: {probe.stderr}")
    _assert_held(_attack(places, monkeypatch, plain_uid), places)


def _running(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


@jailed
def test_a_child_that_calls_setsid_dies_with_the_jail(workspace: Path) -> None:
    marker = f"{uuid.uuid4().int % 10**6}.25"
    script = f"setsid sleep {marker} & sleep 0.01; echo started"
    done = subprocess.run(
        jail_argv(["sh", "-c", script], workspace),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "started", done.stderr
    assert _running(f"sleep\0{marker}") == []  # the PID namespace died with its first process


@jailed
async def test_a_jailed_block_cannot_see_or_signal_vis(make_sandbox: MakeSandbox) -> None:
    box: Sandbox = make_sandbox(jail=True)
    result = await box.run(
        textwrap.dedent(
            f"""
            import os
            print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
            try:
                os.kill({os.getpid()}, 0)
                print('signal escaped')
            except OSError as exc:
                print(type(exc).__name__)
            """
        )
    )
    assert result.error is None, result.error
    pids, signal_result = result.stdout.splitlines()
    assert len(eval(pids)) <= 3 and os.getpid() not in eval(pids)
    assert signal_result == "ProcessLookupError"


@jailed
async def test_the_sandbox_refuses_direct_spawns_ctypes_and_vis_internals(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    box: Sandbox = make_sandbox(jail=True)
    result = await box.run(
        textwrap.dedent(
            """
            import os, subprocess, pty, importlib
            attempts = {
                "subprocess": lambda: subprocess.run(["true"]),
                "os.system": lambda: os.system("true"),
                "os.fork": os.fork,
                "os.execv": lambda: os.execv("/bin/true", ["true"]),
                "os.posix_spawn": lambda: os.posix_spawn("/bin/true", ["true"], {}),
                "pty.spawn": lambda: pty.spawn("true"),
                "ctypes": lambda: __import__("ctypes"),
                "_posixsubprocess": lambda: __import__("_posixsubprocess"),
                "vis_core.sandbox": lambda: __import__("vis_core.sandbox.child"),
                "import_module": lambda: importlib.import_module("vis_core.system.shell"),
                "from vis_core": lambda: exec("from vis_core import host"),
                "_fork_exec": lambda: subprocess._fork_exec(),
                "spawnv_passfds": lambda: __import__("multiprocessing.util").util.spawnv_passfds(
                    "/bin/true", ["true"], ()
                ),
            }
            for name, attempt in attempts.items():
                try:
                    attempt()
                    print(name, "ran")
                except (PermissionError, ImportError) as exc:
                    print(name, "refused:", exc)
            import vis_core.extension as vis
            print("sdk", vis.Extension.__name__)
            """
        )
    )
    assert result.error is None, result.error
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.endswith(" ran")], lines
    assert "gateway policy, no direct spawn" in next(x for x in lines if x.startswith("subprocess"))
    assert "ctypes" in next(x for x in lines if x.startswith("ctypes "))
    assert lines[-1] == "sdk Extension"
    assert [p.name for p in workspace.iterdir()] == [".vis"]  # the jail's empty placeholder


async def test_without_the_jail_the_sandbox_still_spawns(make_sandbox: MakeSandbox) -> None:
    box: Sandbox = make_sandbox(jail=False)
    result = await box.run("import subprocess\nprint(subprocess.run(['true']).returncode)")
    assert result.error is None and result.stdout.strip() == "0"


@jailed
async def test_vis_own_code_is_read_only_when_it_lies_in_the_workspace(
    make_sandbox: MakeSandbox,
) -> None:
    # the README's own setup: the workspace is Vis's checkout, its virtualenv inside it
    targets = [VIS_ROOT / "vis_core" / "planted.py", VIS_ROOT / "vis_tui" / "planted.py"]
    if VIS_ROOT in Path(sys.prefix).resolve().parents:
        targets.append(Path(sys.prefix).resolve() / "planted.py")
    box: Sandbox = make_sandbox(workspace=VIS_ROOT, jail=True)
    try:
        result = await box.run(
            f"for t in {[str(t) for t in targets]!r}:\n"
            "    try:\n"
            "        open(t, 'w').write('import os')\n"
            "        print('escaped', t)\n"
            "    except OSError as exc:\n"
            "        print('refused', exc.errno)\n"
        )
    finally:
        for target in targets:
            target.unlink(missing_ok=True)
    assert result.error is None, result.error
    assert result.stdout.splitlines() == ["refused 30"] * len(targets)


@jailed
def test_no_socket_in_home_is_reachable_when_the_workspace_is_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``vis`` started in ``~``: home was shown read-only, and a socket on a read-only
    mount still accepts connections. A jailed block reached Docker Desktop's
    ``~/.docker/desktop/docker.sock``, an SSH ControlMaster socket in ``~/.ssh`` or
    ``~/.gnupg/S.gpg-agent``: commands outside the jail, or on other machines. Every socket
    among home's dot entries is hidden."""
    from vis_core.system.jail import vis_runtime

    home = tmp_path / "ada"
    places = [
        home / ".docker" / "desktop" / "docker.sock",
        home / ".ssh" / "cm-ada@build:22",
        home / ".gnupg" / "S.gpg-agent",
    ]
    servers = []
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(place))
        server.listen(4)
        servers.append(server)
    monkeypatch.setenv("HOME", str(home))
    code = textwrap.dedent(
        f"""
        import socket
        for place in {[str(p) for p in places]!r}:
            try:
                socket.socket(socket.AF_UNIX).connect(place)
                print("reached", place)
            except OSError:
                print("refused")
        """
    )
    python = Path(sys.executable).resolve()
    runtime = [*vis_runtime(), python.parent.parent]
    try:
        done = subprocess.run(
            jail_argv([str(python), "-I", "-c", code], home, read_only=runtime),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        for server in servers:
            server.close()
    assert done.stdout.splitlines() == ["refused"] * len(places), done.stderr


@jailed
def test_home_dot_files_stay_read_only_when_the_workspace_is_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "ada"
    for folder in (".ssh", ".config", "notes", "bin"):
        (home / folder).mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    script = textwrap.dedent(
        """
        for attempt in "echo evil >> .bashrc" "touch .ssh/authorized_keys" \
            "mkdir -p .config/autostart" "echo evil > .bash_profile" "echo new > top.txt" \
            "echo evil > bin/ls"; do
          sh -c "$attempt" 2>/dev/null && echo "escaped: $attempt" || echo "refused"
        done
        echo ok > notes/todo.txt && echo "notes writable"
        """
    )
    done = subprocess.run(
        jail_argv(["sh", "-c", script], home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.splitlines() == ["refused"] * 6 + ["notes writable"], done.stderr
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (home / ".bash_profile").exists()


@jailed
def test_git_works_read_only_in_a_jailed_worktree(tmp_path: Path) -> None:
    """A workspace that is a git worktree (its ``.git`` a file naming a folder elsewhere):
    git reads it in the jail; neither that folder nor the main repository can be changed."""
    main = tmp_path / "main"
    main.mkdir()
    make_repo(main)
    worktree = tmp_path / "wt"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(worktree)], check=True)
    script = (
        "git status --short && git log --format=%s -1\n"
        "echo x > $(git rev-parse --git-dir)/commondir 2>/dev/null && echo escaped || echo ro\n"
        f"echo x >> {main / '.git' / 'config'} 2>/dev/null && echo escaped || echo ro\n"
    )
    done = subprocess.run(
        jail_argv(["sh", "-c", script], worktree),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.splitlines() == ["first", "ro", "ro"], done.stderr


@jailed
@pytest.mark.parametrize("points_at", ["folder", "commondir", "other-repo", "root", "worktree-of"])
def test_a_checkouts_git_file_shows_nothing_else_in_the_jail(
    tmp_path: Path, points_at: str
) -> None:
    """A never-trusted checkout whose ``.git`` is a file ``gitdir: ~/.ssh`` (or whose gitdir's
    ``commondir`` names it, or ``gitdir: /``, or another repository's ``.git``, or one of that
    repository's worktrees): the jail showed that folder, read-only, to the model, which read
    the private key (``gitdir: /`` showed the whole file system, sockets included). A gitdir
    is shown only when it names this checkout back (a worktree's ``gitdir`` file, a
    submodule's ``core.worktree``)."""
    secret = tmp_path / "dot-ssh"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY\n")
    other = tmp_path / "other"
    other.mkdir()
    make_repo(other)
    (other / ".git" / "secret-notes").write_text("PRIVATE KEY\n")
    subprocess.run(
        ["git", "-C", str(other), "worktree", "add", "-q", str(tmp_path / "other-wt")], check=True
    )
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "x").mkdir()
    gitdir = {
        "folder": str(secret),
        "commondir": "x",
        "other-repo": str(other / ".git"),
        "root": "/",
        "worktree-of": str(other / ".git" / "worktrees" / "other-wt"),
    }[points_at]
    (checkout / "x" / "commondir").write_text(f"{secret}\n")
    (checkout / ".git").write_text(f"gitdir: {gitdir}\n")
    script = (
        f"cat {secret / 'id_rsa'} 2>/dev/null || echo hidden\n"
        f"cat {other / '.git' / 'secret-notes'} 2>/dev/null || echo hidden\n"
    )
    done = subprocess.run(
        jail_argv(["sh", "-c", script], checkout),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.splitlines() == ["hidden", "hidden"], done.stderr


@jailed
@pytest.mark.skipif(os.geteuid() != 0, reason="root-only files are what root can read")
def test_root_only_system_files_stay_hidden_in_the_jail(workspace: Path, tmp_path: Path) -> None:
    """Vis run as root (a container, CI): the jail showed every file of ``/etc`` that only
    root may read beyond a fixed list (``/etc/kubernetes/admin.conf``, ``/etc/krb5.keytab``),
    and a jailed block read them as their owner. Every entry of ``/etc`` others may not read
    is hidden."""
    program = textwrap.dedent(
        f"""
        import subprocess, sys
        from pathlib import Path
        from vis_core.system.jail import jail_argv
        conf, folder = Path("/etc/vis-redteam.conf"), Path("/etc/vis-redteam")
        conf.write_text("TOKEN=private\\n")
        conf.chmod(0o600)
        folder.mkdir(mode=0o700)
        (folder / "admin.conf").write_text("TOKEN=private\\n")
        script = f"cat {{conf}} {{folder}}/admin.conf 2>/dev/null; echo end"
        argv = jail_argv(["sh", "-c", script], Path({str(workspace)!r}))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        """
    )
    done = run_with_private_etc(program, tmp_path)
    assert done.stdout.splitlines() == ["end"], done.stderr


@jailed
@pytest.mark.skipif(os.geteuid() != 0, reason="root-only files are what root can read")
def test_root_only_system_files_made_after_the_first_jail_stay_hidden(
    workspace: Path, tmp_path: Path
) -> None:
    """``/etc`` was walked once per process: a secret root put there later (a ``kubeadm
    init``, a VPN set up while Vis runs), in ``/etc`` or in a folder of it, was readable in
    every later jail."""
    program = textwrap.dedent(
        f"""
        import subprocess, sys
        from pathlib import Path
        from vis_core.system.jail import jail_argv
        folder = Path("/etc/vis-later")
        folder.mkdir(mode=0o755)
        def read() -> str:
            script = f"cat /etc/vis-later.conf {{folder}}/key 2>/dev/null; echo end"
            argv = jail_argv(["sh", "-c", script], Path({str(workspace)!r}))
            return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
        sys.stdout.write(read())
        for path in (Path("/etc/vis-later.conf"), folder / "key"):
            path.write_text("TOKEN=private\\n")
            path.chmod(0o600)
        sys.stdout.write(read())
        """
    )
    done = run_with_private_etc(program, tmp_path)
    assert done.stdout.splitlines() == ["end", "end"], done.stderr


def test_host_side_tools_treat_vis_code_in_the_workspace_as_read_only() -> None:
    """``patch`` and the other host-side writers refuse what the jail keeps read-only: Vis's
    own code and virtualenv when they lie in the workspace, and any ``.git``."""
    from vis_core.system.jail import is_protected

    assert is_protected(VIS_ROOT / "vis_core" / "planted.py", VIS_ROOT)
    assert is_protected(VIS_ROOT / "sub" / ".git" / "commondir", VIS_ROOT)
    if VIS_ROOT in Path(sys.prefix).resolve().parents:
        assert is_protected(Path(sys.prefix).resolve() / "lib" / "planted.py", VIS_ROOT)
    assert not is_protected(VIS_ROOT / "docs" / "notes.md", VIS_ROOT)


def test_a_workspace_at_the_root_folder_is_not_jailed_as_if_it_were_confined() -> None:
    """``vis`` started in ``/`` (a container's default folder): the jail refuses instead of
    binding the whole system read-write (host /proc included)."""
    from vis_core.system.jail_check import JailUnavailable

    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    with pytest.raises(JailUnavailable, match="root folder /"):
        jail_argv(["true"], Path("/"))


SANDBOX_AS_USER = """
import asyncio, os, sys
from pathlib import Path
from vis_core.sandbox import Sandbox

async def main():
    async def call(name, args, kwargs):
        return None
    box = Sandbox(workspace=Path(sys.argv[1]), call_tool=call, tools=lambda: [], jail=True)
    result = await box.run(sys.argv[2])
    await box.close()
    print(result.stdout, end="")
    print("error:", result.error)

asyncio.run(main())
"""
BLOCK_AS_USER = """
import os, subprocess
print("uid", os.getuid())
try:
    subprocess.run(["true"])
    print("spawn escaped")
except PermissionError:
    print("spawn refused")
print("secrets", "escaped" if os.path.exists(os.environ.get("SECRET_PATH", "/x")) else "hidden")
try:
    open("vis.yml", "a").write("x: 1\\n")
    print("control escaped")
except OSError:
    print("control refused")
"""


@jailed
def test_the_jailed_sandbox_runs_as_an_ordinary_user(
    places: dict[str, Path], plain_uid: int
) -> None:
    """The whole sandbox (child, protocol, refusals) started by an ordinary user."""
    try:
        runs = subprocess.run(
            [sys.executable, "-c", "import vis_core"],
            user=plain_uid,
            capture_output=True,
            check=False,
            cwd="/",
            env={"PYTHONPATH": str(VIS_ROOT)},
        )
        usable = runs.returncode == 0
    except PermissionError:
        usable = False
    if not usable:
        pytest.skip(
            f"Vis's Python ({sys.executable} -> {Path(sys.executable).resolve()}) cannot be "
            "run by an ordinary user here (a folder on its way is private)"
        )
    workspace = places["workspace"]
    (workspace / "vis.yml").write_text("toggles: {}\n")
    subprocess.run(["chown", "-R", str(plain_uid), str(places["top"])], check=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": "/nonexistent-home",
        "VIS_HOME": str(places["vis_home"]),
        "SECRET_PATH": str(places["vis_home"] / "secrets"),
        "PYTHONPATH": str(VIS_ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", SANDBOX_AS_USER, str(workspace), BLOCK_AS_USER],
        user=plain_uid,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
    )
    lines = done.stdout.splitlines()
    assert lines == [
        f"uid {plain_uid}",
        "spawn refused",
        "secrets hidden",
        "control refused",
        "error: None",
    ], (done.stdout, done.stderr)


@jailed
def test_after_kill_9_of_vis_no_jailed_process_survives(workspace: Path, vis_home: Path) -> None:
    """Vis killed with SIGKILL while a jailed command and its setsid() child run: the PID
    namespace dies with bwrap, which dies with Vis."""
    import json
    import time

    marker = f"{uuid.uuid4().int % 10**6}.5"
    code = (
        f'sh = await shell("setsid sleep {marker} & echo up > up.txt; exec sleep {marker}")\n'
        "import asyncio\nawait asyncio.sleep(120)"
    )
    path = workspace.parent / "script.json"
    path.write_text(json.dumps([{"code": code}, {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", "run", "--provider", "scripted"]
        + ["--script", str(path), "go"],
        cwd=workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (workspace / "up.txt").exists() or len(_running(f"sleep\0{marker}")) < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _running(f"sleep\0{marker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running(f"sleep\0{marker}") == [], "a jailed process outlived Vis"


@jailed
@pytest.mark.skipif(os.geteuid() != 0, reason="root-only files are what root can read")
def test_a_root_only_file_gone_since_the_scan_does_not_stop_the_jail(
    workspace: Path, tmp_path: Path
) -> None:
    """``/etc``'s root-only entries are found once per process; a lock file that existed then
    (useradd's ``/etc/passwd.lock``, apt's) and is gone now must not make every later jail
    fail to start."""
    program = textwrap.dedent(
        f"""
        import os, subprocess, sys
        from pathlib import Path
        from vis_core.system.jail_check import private_system_entries
        from vis_core.system.jail import jail_argv
        lock = Path("/etc/vis-held.lock")
        lock.write_text("")
        lock.chmod(0o600)
        try:
            assert str(lock) in private_system_entries()
        finally:
            lock.unlink()
        argv = jail_argv(["sh", "-c", "echo started"], Path({str(workspace)!r}))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        sys.stdout.write(done.stdout + done.stderr)
        """
    )
    done = run_with_private_etc(program, tmp_path)
    assert done.stdout.strip() == "started", (done.stdout, done.stderr)


@jailed
@pytest.mark.skipif(os.geteuid() != 0, reason="root-only files are what root can read")
def test_a_shadow_utils_lock_gone_between_the_argv_and_the_mount_does_not_stop_the_jail(
    workspace: Path, tmp_path: Path
) -> None:
    """useradd makes ``/etc/passwd.<pid>``, ``/etc/shadow+``… root-only and removes them within
    milliseconds: one there when the jail's arguments are made and gone when bubblewrap mounts
    (CI caught a useradd beside a jailed block) must not stop the jail, so none is masked."""
    program = textwrap.dedent(
        f"""
        import subprocess, sys
        from pathlib import Path
        from vis_core.system.jail import jail_argv
        lock = Path("/etc/shadow.4242")
        lock.write_text("")
        lock.chmod(0o600)
        try:
            argv = jail_argv(["sh", "-c", "echo started"], Path({str(workspace)!r}))
        finally:
            lock.unlink()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        sys.stdout.write(done.stdout + done.stderr)
        """
    )
    done = run_with_private_etc(program, tmp_path)
    assert done.stdout.strip() == "started", (done.stdout, done.stderr)


@jailed
@pytest.mark.parametrize("protected", [".git/config", ".git/hooks/pre-commit"])
def test_a_hard_link_made_earlier_does_not_open_a_protected_file(
    tmp_path: Path, protected: str
) -> None:
    """A hard link made before the jail (an unpacked archive, a session with the jail off)
    gives a protected file a second, writable name: the jail binds paths, not files, so it
    refuses to start and names the file, instead of letting ``.git/config`` be written (the
    other control files go on: tests/sandbox/test_sandbox_jail.py)."""
    from vis_core.system.jail_check import JailUnavailable

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".vis").mkdir()
    target = repo / protected
    target.parent.mkdir(exist_ok=True)
    if not target.exists():
        target.write_text("[core]\n")
    before = target.read_text()
    os.link(target, repo / "notes.txt")
    with pytest.raises(JailUnavailable, match=f"{target}: it has another name"):
        jail_argv(["sh", "-c", "echo '[core] fsmonitor = evil' >> notes.txt"], repo)
    assert target.read_text() == before
    os.unlink(repo / "notes.txt")
    jail_argv(["true"], repo)  # one name again: the jail starts


@jailed
def test_vis_home_in_a_writable_home_cannot_be_moved_out_of_its_mask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vis started in home with ``jail_home_writable``, its folders under home (as without
    VIS_HOME): a jail masks ``~/.config/vis``, but a block could rename ``~/.config``; the
    next jail found no ``~/.config/vis`` to mask and showed the keys under the new name."""
    home = tmp_path / "ada"
    vis_home = home / ".config" / "vis"
    vis_home.mkdir(parents=True)
    (vis_home / "secrets").write_text("sk-host-secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VIS_HOME", str(vis_home))

    def run(script: str) -> str:
        argv = jail_argv(["sh", "-c", script], home, home_writable=True)
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout

    moved = run("mv ~/.config ~/.moved 2>/dev/null && echo moved || echo refused")
    shown = run("cat ~/.moved/vis/secrets ~/.config/vis/secrets 2>/dev/null; echo end")
    assert (moved, shown) == ("refused\n", "end\n")
    assert (vis_home / "secrets").read_text() == "sk-host-secret\n"
