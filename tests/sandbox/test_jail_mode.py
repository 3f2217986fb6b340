"""The jail is on by default where bubblewrap works; every session says which mode it runs in."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_support import script, vis

from vis_core.host import Host, HostOptions

from .hostile import BWRAP_PROBLEM

jailed = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))

# A block that shows whether it runs jailed: the project's control files are read-only there.
PROBE = [
    {"code": "try:\n    open('.env', 'a').write('EVIL=1\\n')\nexcept OSError:\n    pass"},
    {"text": "Done."},
]


def _run(workspace: Path, tmp_path: Path, vis_home: Path, **env: str) -> tuple[str, str]:
    (workspace / ".env").write_text("A=1\n")
    path = script(tmp_path, PROBE)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        done = vis(
            "run",
            "--provider",
            "scripted",
            "--script",
            str(path),
            "go",
            cwd=workspace,
            env_home=vis_home,
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return done.stdout, done.stderr


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with bash, git and the usual tools but no bwrap."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("bash", "sh", "git", "rg", "env", "cat", "ls"):
        found = shutil.which(tool)
        if found:
            (folder / tool).symlink_to(found)
    return str(folder)


@jailed
def test_vis_run_is_jailed_by_default_and_says_so(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    out, err = _run(workspace, tmp_path, vis_home)
    assert (workspace / ".env").read_text() == "A=1\n", (out, err)  # read-only in the jail
    lines = [
        line for line in err.splitlines() if line.startswith(("vis: jailed", "vis: not jailed"))
    ]
    assert len(lines) == 1 and lines[0].startswith("vis: jailed:"), err


def test_jail_false_is_an_explicit_choice_and_vis_run_says_so(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = false\n")
    out, err = _run(workspace, tmp_path, vis_home)
    assert "EVIL" in (workspace / ".env").read_text(), (out, err)  # the block ran unconfined
    assert "vis: not jailed:" in err and "jail setting is false (global setting)" in err


def test_without_bubblewrap_the_default_is_off_and_says_what_to_install(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    out, err = _run(workspace, tmp_path, vis_home, PATH=_path_without_bwrap(tmp_path))
    assert "EVIL" in (workspace / ".env").read_text(), (out, err)  # the block ran unconfined
    assert "vis: not jailed:" in err and "apt-get install bubblewrap" in err


def test_jail_on_without_bubblewrap_runs_nothing_and_says_why(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    out, err = _run(workspace, tmp_path, vis_home, PATH=_path_without_bwrap(tmp_path))
    assert (workspace / ".env").read_text() == "A=1\n", (out, err)
    assert "the jail is on but cannot run here" in err and "apt-get install bubblewrap" in err


async def test_a_workspace_that_is_home_gets_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "ada"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    host = await Host.open(HostOptions(workspace=home, provider="scripted"))
    try:
        notes = [n for n in host.startup_notes() if "home folder" in n]
    finally:
        await host.close()
    assert len(notes) == 1 and "~/.bashrc" in notes[0] and "project folder" in notes[0]


def test_vis_run_in_home_warns_on_stderr(tmp_path: Path, vis_home: Path) -> None:
    home = tmp_path / "ada"
    home.mkdir()
    _, err = _run(home, tmp_path, vis_home, HOME=str(home))
    assert "is your home folder" in err
