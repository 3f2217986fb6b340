"""``vis.workspace_files()`` (Git's view, shared for two seconds), roots and Python environment."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from big_index import indexed
from processes import without_waiting_on

import vis_core.extension as vis
from vis_core.extension import workspace as workspace_module
from vis_core.extension.context import CallContext, calling
from vis_core.paths import TrustStore, VisPaths
from vis_core.system.git import MAX_LISTED

from .harness import code_turn, install_extension, open_host, run_turn, write_script

PROBE = '''
import json

import vis_core.extension as vis


def probe() -> str:
    """The roots, files and Python environment this session gives the extension."""
    files = vis.workspace_files()
    return json.dumps({
        "workspace_root": str(vis.workspace_root()),
        "project_root": str(vis.project_root()),
        "files": sorted(str(p.relative_to(vis.workspace_root())) for p in files or []),
        "python": vis.python_environment(),
    })


vis.register_extension(vis.Extension(
    name="probe", description="Reports roots.", alias="probe", symbols=[vis.Symbol(probe)],
))
'''


def git_repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("build/\n")
    (root / "tracked.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(root), "add", "tracked.py", ".gitignore"], check=True)
    (root / "untracked.py").write_text("y = 2\n")
    (root / "build").mkdir()
    (root / "build" / "ignored.py").write_text("z = 3\n")
    return root


def names(files: list[Path] | None, root: Path) -> list[str]:
    assert files is not None
    return sorted(str(p.relative_to(root)) for p in files)


def test_files_are_gits_view_and_shared_for_two_seconds(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git_repo(workspace)
    monkeypatch.chdir(workspace)  # outside Vis: the process working directory
    clock = [1000.0]
    monkeypatch.setattr(workspace_module.time, "monotonic", lambda: clock[0])
    first = vis.workspace_files()
    assert names(first, workspace) == [".gitignore", "tracked.py", "untracked.py"]
    (workspace / "new.py").write_text("")
    clock[0] += 1.5
    assert names(vis.workspace_files(), workspace) == names(first, workspace)  # shared listing
    clock[0] += 1.0
    assert "new.py" in names(vis.workspace_files(), workspace)  # listed again after 2 s


def test_a_workspace_too_big_to_list_is_an_error_naming_the_bound(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's whole listing was read: an index (a checkout's, or one a block made) naming
    millions of paths took the extension worker's memory. Past the bound of every listing
    Vis reads from Git, Git is stopped and the extension gets an error naming the bound."""
    indexed(workspace, paths=MAX_LISTED + 1)
    monkeypatch.chdir(workspace)
    with pytest.raises(RuntimeError, match="more than 300,000 files or 64 MiB of file names"):
        vis.workspace_files()
    with pytest.raises(RuntimeError, match="more than 300,000 files"):
        vis.workspace_files()  # the waiters of one listing share its verdict too


def test_files_are_none_outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert vis.workspace_files() is None


def test_outside_vis_roots_and_python_environment_use_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert vis.workspace_root() == tmp_path and vis.project_root() == tmp_path
    assert vis.python_environment() == "project"


def test_a_call_without_a_session_has_no_roots(workspace: Path) -> None:
    with calling(CallContext(session_id=None, workspace_root=workspace, project_root=workspace)):
        with pytest.raises(RuntimeError, match="no.*session|has none"):
            vis.workspace_root()


async def test_in_a_session_the_roots_files_and_environment_follow_the_project(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    git_repo(workspace)
    (workspace / "vis.yml").write_text("python:\n  environment: shared\n")
    TrustStore(VisPaths.from_env()).trust(workspace)  # a project's value waits for trust
    install_extension(vis_home, "probe", PROBE)
    write_script(script_path, code_turn("print(await probe.probe())"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    seen = outcome.printed(0)
    assert seen["workspace_root"] == str(workspace.resolve())
    assert seen["project_root"] == str(workspace.resolve())
    assert seen["files"] == [".gitignore", "tracked.py", "untracked.py", "vis.yml"]
    assert seen["python"] == "shared"


def test_a_bad_python_environment_names_the_file(vis_home: Path, workspace: Path) -> None:
    (workspace / "vis.yml").write_text("python:\n  environment: global\n")
    with calling(CallContext(session_id="s", workspace_root=workspace, project_root=workspace)):
        assert vis.python_environment() == "project"  # an untrusted project's value waits
    TrustStore(VisPaths.from_env()).trust(workspace)
    with calling(CallContext(session_id="s", workspace_root=workspace, project_root=workspace)):
        with pytest.raises(ValueError, match=r"vis\.yml.*'project'"):
            vis.python_environment()


def test_python_environment_never_waits_on_a_pipe_named_vis_yml(
    vis_home: Path, workspace: Path
) -> None:
    os.mkfifo(workspace / "vis.yml")  # a checkout can hold one; git cannot
    TrustStore(VisPaths.from_env()).trust(workspace)
    context = CallContext(session_id="s", workspace_root=workspace, project_root=workspace)

    def ask() -> str:
        with calling(context):
            return vis.python_environment()

    assert without_waiting_on(workspace / "vis.yml", ask) == "project"


def test_a_vis_yml_or_config_nested_too_deeply_is_a_clear_error(
    vis_home: Path, workspace: Path
) -> None:
    """A checkout's ``vis.yml`` (or the person's ``config.toml``) nested thousands deep made
    ``vis.python_environment()`` raise ``RecursionError`` out of the parser; it is the same
    ``ValueError`` naming the file as any other file Vis cannot read."""
    context = CallContext(session_id="s", workspace_root=workspace, project_root=workspace)
    (workspace / "vis.yml").write_text("python: " + "[" * 20_000 + "]" * 20_000 + "\n")
    TrustStore(VisPaths.from_env()).trust(workspace)
    with calling(context), pytest.raises(ValueError, match=r"vis\.yml.*nests too deeply"):
        vis.python_environment()
    (workspace / "vis.yml").unlink()
    config = VisPaths.from_env().config_file
    config.write_text("python = " + "[" * 20_000 + "]" * 20_000 + "\n")
    with calling(context), pytest.raises(ValueError, match=r"config\.toml.*nests too deeply"):
        vis.python_environment()
