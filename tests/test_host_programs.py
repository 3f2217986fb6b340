"""Vis's own git and ripgrep never come from the checkout, whatever ``PATH`` holds."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import script, vis

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PLANTED = '#!/bin/sh\necho "$0 $*" >> {marker}\nexit 1\n'


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository whose top holds an executable ``git`` and ``rg`` that leave a mark."""
    workspace = tmp_path / "checkout"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "notes.txt").write_text("needle\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(workspace), "add", "notes.txt"], check=True)
    marker = tmp_path / "ran"
    for name in ("git", "rg"):
        planted = workspace / name
        planted.write_text(PLANTED.format(marker=marker), encoding="utf-8")
        planted.chmod(0o755)
    return workspace, marker


@pytest.mark.parametrize("jail", ["true", "false"])
@pytest.mark.parametrize("entry", ["", "."])
def test_a_path_entry_naming_the_working_folder_runs_no_planted_program(
    tmp_path: Path, jail: str, entry: str
) -> None:
    workspace, marker = _checkout(tmp_path)
    answers = [
        {"code": "print(await grep('needle'))\nopen('new.txt', 'w').write('x')"},
        {"text": "Done."},
    ]
    path = entry + os.pathsep + os.environ["PATH"]  # the working folder is searched first
    done = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script(tmp_path, answers)),
        "--toggles",
        f"jail={jail}",
        "search",
        cwd=workspace,
        env_home=tmp_path / "home",
        extra_env={"PATH": path},
    )
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), marker.read_text()
    assert "1 match in 1 file" in done.stdout  # grep found it, with a real engine
