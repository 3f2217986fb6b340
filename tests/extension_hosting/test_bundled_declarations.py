"""The bundled extensions load in the registration worker too, their reports kept between starts:
a start with the kept reports runs no bundled entry file in the host (nor a worker to load them),
a changed bundled file or a damaged cache file is loaded again and kept anew."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from vis_core.extension_host import bundled_cache
from vis_core.extension_host.discovery import bundled_dir
from vis_core.extension_host.loaded import ExtensionStatus
from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.registration import RegistrationWorker

from .harness import install_extension

# Runs in its own process: warms the kept reports, then opens a host (counting the registration
# workers it starts), runs a block that uses the bundled todo and git tools, and /todo; prints
# what it saw and every module of the host that comes from the bundled folder.
HOST_RUN = """
import asyncio, json, sys
from pathlib import Path

from vis_core.events import BlockFinished
from vis_core.extension_host.discovery import bundled_dir
from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.registration import RegistrationWorker
from vis_core.host import Host
from vis_core.host_options import HostOptions

workspace, script = Path(sys.argv[1]), Path(sys.argv[2])
warm = load_extensions(include_packages=False)  # keeps the reports if they were not kept yet
assert not warm.errors, warm.errors
starts = []
real_start = RegistrationWorker._start


def counted(self):
    starts.append(1)
    return real_start(self)


RegistrationWorker._start = counted


async def main():
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events = []
        session.subscribe(events.append)
        await session.submit("go")
        blocks = [e for e in events if isinstance(e, BlockFinished)]
        command = await host.commands.run(session, "/todo list")
        return {
            "workers_started": len(starts),
            "errors": [str(e) for e in host.catalog.loaded.errors],
            "enabled": [e.name for e in host.catalog.loaded.enabled],
            "stdout": [b.stdout for b in blocks],
            "block_errors": [b.error for b in blocks if b.error],
            "command": [command.title, command.body],
        }
    finally:
        await host.close()


seen = asyncio.run(main())
folder = str(bundled_dir())
seen["bundled_modules"] = sorted(
    name
    for name, module in list(sys.modules.items())
    if name.startswith(("vis_ext_bundled", "vis_extensions"))
    or str(getattr(module, "__file__", None) or "").startswith(folder)
)
print(json.dumps(seen))
"""

CODE = """
import json
await todo.add("Write the tests")
listing = await todo.list()
status = await git.status()
print(json.dumps({"todo": str(listing), "branch": status.branch,
                  "files": [f.path for f in status.files]}))
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_warm_start_runs_no_bundled_entry_file_in_the_host_and_bundled_tools_work(
    workspace: Path, tmp_path: Path
) -> None:
    _git(workspace, "init", "-q", "-b", "main")
    (workspace / "notes.txt").write_text("new\n")
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": CODE}, {"text": "Done."}]), encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run(
        [sys.executable, "-c", HOST_RUN, str(workspace), str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["errors"] == [] and seen["enabled"] == ["git", "todo"]
    assert seen["workers_started"] == 0  # the kept reports, no registration worker
    assert seen["bundled_modules"] == []  # no bundled entry file ran in the host
    assert seen["block_errors"] == []
    printed = json.loads(seen["stdout"][0].strip().splitlines()[-1])
    assert printed == {"todo": "[ ] #1 Write the tests", "branch": "main", "files": ["notes.txt"]}
    assert seen["command"] == ["1 open, 0 done", "- [ ] **#1** Write the tests"]


def _copy_bundled(tmp_path: Path) -> Path:
    copy = tmp_path / "bundled"
    shutil.copytree(bundled_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


class _Starts:
    """Counts the registration workers started (each start runs a real worker)."""

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        real = RegistrationWorker._start

        def counted(worker: RegistrationWorker):  # type: ignore[no-untyped-def]
            self.count += 1
            return real(worker)

        monkeypatch.setattr(RegistrationWorker, "_start", counted)


def _todo_description(bundled: Path) -> str:
    loaded = load_extensions(bundled=bundled, include_packages=False)
    assert loaded.errors == ()
    todo = loaded.get("todo")
    assert todo is not None and todo.status is ExtensionStatus.LOADED
    return todo.declaration.description if todo.declaration else ""


def test_a_changed_bundled_file_is_loaded_again_and_kept_anew(tmp_path: Path, monkeypatch) -> None:
    bundled = _copy_bundled(tmp_path)
    cache = bundled_cache.cache_file()  # a copy keeps its cache in $VIS_HOME/cache
    starts = _Starts(monkeypatch)
    before = _todo_description(bundled)
    assert starts.count == 1 and cache.is_file()
    assert _todo_description(bundled) == before and starts.count == 1  # kept: no worker

    entry = bundled / "todo" / "__init__.py"
    entry.write_text(
        entry.read_text().replace(f'"{before}"', f'"{before} Changed."'), encoding="utf-8"
    )
    assert _todo_description(bundled) == before + " Changed." and starts.count == 2
    kept = json.loads(cache.read_text())["declarations"][str(entry)]
    assert kept["description"] == before + " Changed."
    assert _todo_description(bundled) == before + " Changed." and starts.count == 2


def test_a_damaged_cache_file_is_ignored_and_written_again(tmp_path: Path, monkeypatch) -> None:
    bundled = _copy_bundled(tmp_path)
    cache = bundled_cache.cache_file()
    starts = _Starts(monkeypatch)
    first = load_extensions(bundled=bundled, include_packages=False)
    good = cache.read_bytes()
    expected = [(e.name, [t.name for t in e.tools]) for e in first.enabled]
    damaged = [
        good[: len(good) // 2],  # cut short
        b"\x00\xff not json",
        json.dumps({"key": "another", "declarations": {}}).encode(),  # another key or format
        good.replace(b'"tools": [{"name"', b'"tools": [{"nom"'),  # the key, with broken data
    ]
    for number, text in enumerate(damaged, start=2):
        cache.write_bytes(text)
        again = load_extensions(bundled=bundled, include_packages=False)
        assert again.errors == ()
        assert [(e.name, [t.name for t in e.tools]) for e in again.enabled] == expected
        assert starts.count == number  # loaded in the worker again
        assert cache.read_bytes() == good  # and kept anew


def test_the_kept_file_is_written_whole_and_private(tmp_path: Path) -> None:
    target = tmp_path / "cache" / bundled_cache.FILE_NAME
    assert bundled_cache.write(target, {"k": 1}, {"/x/__init__.py": {"name": "x"}})
    assert (target.stat().st_mode & 0o777) == 0o600
    assert bundled_cache.read(target, {"k": 1}) == {"/x/__init__.py": {"name": "x"}}
    assert bundled_cache.read(target, {"k": 2}) is None
    assert [p.name for p in target.parent.iterdir()] == [bundled_cache.FILE_NAME]  # no temp left


def test_doctor_still_lists_a_bundled_load_fault(tmp_path: Path) -> None:
    bundled = _copy_bundled(tmp_path)
    (bundled / "todo" / "__init__.py").write_text(
        textwrap.dedent(
            """
            import vis_core.extension as vis
            raise RuntimeError("todo is broken")
            """
        ),
        encoding="utf-8",
    )
    from vis_core.extension_host.doctor import describe

    for _ in range(2):  # a fault is never kept: the second start finds it again
        loaded = load_extensions(bundled=bundled, include_packages=False)
        rows = {row.name: row for row in describe(loaded)}
        assert rows["todo"].status == "failed"
        assert rows["todo"].error is not None and "todo is broken" in rows["todo"].error
        assert loaded.get("git") is not None


def test_a_miss_loads_bundled_and_user_entry_files_in_one_worker(
    tmp_path: Path, vis_home: Path, monkeypatch
) -> None:
    bundled = _copy_bundled(tmp_path)
    install_extension(
        vis_home,
        "hello",
        """
        import vis_core.extension as vis

        def hi() -> str:
            "Say hi."
            return "hi"

        vis.register_extension(
            vis.Extension(name="hello", alias="hello", description="Hi.", symbols=[vis.Symbol(hi)])
        )
        """,
    )
    starts = _Starts(monkeypatch)
    screened: list[list[str]] = []
    real = RegistrationWorker.screen_all

    def recorded(worker: RegistrationWorker, candidates):  # type: ignore[no-untyped-def]
        candidates = list(candidates)
        screened.append([c.path.name for c in candidates])
        return real(worker, candidates)

    monkeypatch.setattr(RegistrationWorker, "screen_all", recorded)
    for _ in range(2):
        loaded = load_extensions(bundled=bundled, include_packages=False)
        assert loaded.errors == () and [e.name for e in loaded.enabled] == ["git", "todo", "hello"]
    # cold: one worker loads all three; warm: only the user's entry file, which is never kept
    assert screened == [["git", "todo", "hello.py"], ["hello.py"]] and starts.count == 2


def _files_of_vis() -> dict[str, tuple[int, int]]:
    """Size and modification time of every file of Vis's packages but bytecode."""
    import vis_core
    import vis_tui

    found = {}
    for package in (Path(vis_core.__file__).parent, Path(vis_tui.__file__).parent, bundled_dir()):
        for path in package.rglob("*"):
            if path.is_file() and path.suffix != ".pyc":
                stat = path.stat()
                found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_the_kept_reports_live_in_vis_home_and_nothing_is_written_into_vis(
    vis_home: Path,
) -> None:
    cache = vis_home / "cache"
    if cache.is_dir():  # the run's shared copies: this start must write its own
        shutil.rmtree(cache)
    before = _files_of_vis()
    loaded = load_extensions()  # the shipped bundled folder and installed entry points
    assert loaded.errors == ()
    assert (cache / bundled_cache.FILE_NAME).is_file()
    assert (cache / "vis-installed.json").is_file()  # entry points, read once
    assert _files_of_vis() == before
