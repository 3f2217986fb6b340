"""grep in a checkout whose .gitignore (or .rgignore) is a named pipe stops at once and names it:
ripgrep and git would wait on the pipe for ever."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from vis_core.tools import ToolContext
from vis_core.tools.search import search


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (rg) is not installed")
@pytest.mark.parametrize("name", ["sub/.gitignore", "sub/.rgignore", ".gitignore"])
@pytest.mark.parametrize("repository", [False, True], ids=["plain", "git"])
async def test_ripgrep_waiting_on_a_pipe_is_stopped_and_the_pipe_named(
    workspace: Path, tmp_path: Path, name: str, repository: bool
) -> None:
    if repository:
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.py").write_text("needle = 1\n")
    pipe = workspace / name
    os.mkfifo(pipe)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    with pytest.raises(RuntimeError, match="named pipe") as failed:
        await search(ctx, "needle", engine="rg")
    assert str(pipe) in str(failed.value)
    pipe.unlink()
    assert "sub/a.py @1" in await search(ctx, "needle", engine="rg")


async def test_the_python_search_names_the_pipe_git_waited_on(
    workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.py").write_text("needle = 1\n")
    pipe = workspace / "sub" / ".gitignore"
    pipe.parent.mkdir()
    os.mkfifo(pipe)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    with pytest.raises(RuntimeError, match="named pipe") as failed:
        await search(ctx, "needle", engine="python")
    assert str(pipe) in str(failed.value)


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (rg) is not installed")
async def test_ripgrep_reading_a_huge_sparse_ignore_file_is_stopped(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("needle = 1\n")
    rules = workspace / ".rgignore"
    with open(rules, "wb") as file:
        file.truncate(8 << 30)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    with pytest.raises(RuntimeError, match="file of rules") as failed:
        await search(ctx, "needle", engine="rg")
    assert str(rules) in str(failed.value)
