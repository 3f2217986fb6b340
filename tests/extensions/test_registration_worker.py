"""The registration worker: an entry file that exits, hangs, raises or crashes fails alone,
named with its file and cause; the others load and Vis goes on."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from warm_servers import vis_command

from vis_core.extension_host.doctor import describe
from vis_core.extension_host.environment import extension_environment
from vis_core.extension_host.loaded import ExtensionStatus
from vis_core.extension_host.loader import load_extensions
from vis_core.paths import VisPaths

GOOD = """
import vis_core.extension as vis

def hello() -> str:
    \"\"\"Say hello.\"\"\"
    return "hello"

vis.register_extension(
    vis.Extension(name="good", alias="good", description="Loads.", symbols=[vis.Symbol(hello)])
)
"""

FAULTS = {
    "exits": "import sys\nsys.exit(3)\n",
    "hard_exit": "import os\nos._exit(7)\n",
    "raises": "raise LookupError('no such table')\n",
    "loops": "import time\nwhile True:\n    time.sleep(0.05)\n",  # no CPU burnt while it waits
    # a real fault, in the loading thread; os.kill(getpid(), SIGSEGV) is sent to the process,
    # and may land after the file has loaded, while the worker loads the next one
    "crashes": "import ctypes\nctypes.string_at(0)\n",
}


def _write(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def test_each_load_time_fault_is_isolated_and_named() -> None:
    folder = VisPaths.from_env().extensions_dir
    _write(folder, "good", GOOD)
    for name, source in FAULTS.items():
        _write(folder, name, "import vis_core.extension as vis\n" + source)
    loaded = load_extensions(bundled=None, include_packages=False, load_timeout=2)
    by_file = {ext.path.name: ext for ext in loaded.extensions}
    assert [ext.name for ext in loaded.enabled] == ["good"]
    assert [tool.name for tool in loaded.host_tools()] == ["hello"]

    def error(name: str) -> str:
        ext = by_file[f"{name}.py"]
        assert ext.status is ExtensionStatus.FAILED and ext.error is not None
        assert ext.error.path == folder / f"{name}.py"
        return ext.error.message

    assert "called sys.exit(3) while loading" in error("exits")
    assert by_file["exits.py"].error.line == 3  # type: ignore[union-attr]
    assert "exited with code 7" in error("hard_exit")
    assert error("raises") == "LookupError: no such table"
    assert by_file["raises.py"].error.line == 2  # type: ignore[union-attr]
    assert "did not finish within 2 s" in error("loops")
    assert "extension_load_timeout" in error("loops")
    assert "crashed (SIGSEGV)" in error("crashes")

    rows = {row.path.name: row for row in describe(loaded)}  # what `vis doctor` prints
    for name in FAULTS:
        row = rows[f"{name}.py"]
        assert row.status == "failed" and str(folder / f"{name}.py") in str(row)
    assert rows["good.py"].status == "loaded"


ENV_PROBE = """
import os
from pathlib import Path
import vis_core.extension as vis

vis.register_extension(vis.Extension(name="probe", description="Env.", env=["PROBE_TOKEN"]))
seen = [k for k in ("ANTHROPIC_API_KEY", "PROBE_TOKEN", "PROJECT_VALUE") if k in os.environ]
out = Path(os.environ["PROBE_DIR"]) / str(os.getpid())
out.write_text(" ".join([*seen, os.environ.get("PROBE_TOKEN", "-")]), encoding="utf-8")
"""


def test_worker_sees_declared_env_and_project_values_not_the_host(
    tmp_path: Path, monkeypatch
) -> None:
    project, seen = tmp_path / "project", tmp_path / "seen"
    project.mkdir()
    seen.mkdir()
    (project / "vis.yml").write_text(
        f"environment:\n  PROJECT_VALUE: shared\n  PROBE_DIR: {seen}\n", encoding="utf-8"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-host-secret")
    monkeypatch.setenv("PROBE_TOKEN", "declared-value")
    _write(VisPaths.from_env().extensions_dir, "probe", ENV_PROBE)
    loaded = load_extensions(
        project_root=project,
        trusted=True,
        bundled=None,
        include_packages=False,
        environment=extension_environment(project, trusted=True),
    )
    assert [ext.name for ext in loaded.enabled] == ["probe"]
    (worker,) = [path for path in seen.iterdir() if path.name != str(os.getpid())]
    assert worker.read_text(encoding="utf-8") == "PROBE_TOKEN PROJECT_VALUE declared-value"


async def test_the_load_time_limit_is_a_setting_and_the_session_goes_on(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    from vis_core.events import BlockFinished
    from vis_core.host import Host, HostOptions

    (vis_home / "config.toml").write_text('extension_load_timeout = "2"\n', encoding="utf-8")
    folder = vis_home / "extensions"
    _write(folder, "good", GOOD)
    _write(folder, "loops", "import vis_core.extension as vis\n" + FAULTS["loops"])
    script = tmp_path / "script.json"
    script.write_text('[{"code": "print(await good.hello())"}, {"text": "done"}]')
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        (failed,) = host.catalog.loaded.errors
        assert failed.path == folder / "loops.py"
        assert "did not finish within 2 s (the extension_load_timeout setting)" in failed.message
        session = await host.new_session()
        events: list[object] = []
        session.subscribe(events.append)
        await session.submit("say hello")
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None and block.stdout == "hello\n"
    finally:
        await host.close()


def test_doctor_names_each_faulty_file_and_its_cause(workspace: Path, vis_home: Path) -> None:
    import subprocess

    folder = vis_home / "extensions"
    _write(folder, "exits", "import sys\nsys.exit(3)\n")
    _write(folder, "hard_exit", "import os\nos._exit(7)\n")
    result = subprocess.run(
        vis_command("doctor"),
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    out = result.stdout
    assert f"{folder / 'exits.py'}:2: the entry file called sys.exit(3) while loading" in out
    assert f"{folder / 'hard_exit.py'}: the extension worker exited with code 7" in out
    assert "git" in out and "todo" in out  # the bundled extensions still load


async def test_reload_loads_every_entry_file_through_the_worker_again(
    workspace: Path, vis_home: Path
) -> None:
    from vis_core.host import Host, HostOptions

    folder = vis_home / "extensions"
    _write(folder, "good", GOOD)
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        assert "good" in [ext.name for ext in host.catalog.loaded.enabled]
        _write(folder, "good", "import os\nos._exit(5)\n")  # changed on disk, then /reload
        summary = await host.reload()
        assert "1 failed" in summary and "the extension worker exited with code 5" in summary
        assert "good" not in [ext.name for ext in host.catalog.loaded.enabled]
        assert {"git", "todo"} <= {ext.name for ext in host.catalog.loaded.enabled}
    finally:
        await host.close()
