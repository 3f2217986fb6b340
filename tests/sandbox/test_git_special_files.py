"""A named pipe or a huge file where git reads its ignore or attribute rules cannot hang Vis."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vis_core.system.git import GitFailed, run_git
from vis_core.tools.ignore import listed_files

from .hostile import BWRAP_PROBLEM, git, make_repo

LISTING = ["ls-files", "-z", "-co", "--exclude-standard"]
WITH_ATTRIBUTES = ["ls-files", "-s", "--eol", "-z"]  # the checkpoint scan's listing


def _pipe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("where", "args"),
    [
        ("sub/.gitignore", LISTING),
        (".gitignore", LISTING),
        (".git/info/exclude", LISTING),
        (".git/config", LISTING),
        ("outside/excludes", LISTING),  # core.excludesFile, set in the repository's config
        (".gitattributes", WITH_ATTRIBUTES),
        ("outside/attributes", WITH_ATTRIBUTES),  # core.attributesFile
    ],
)
def test_git_waiting_on_a_pipe_is_stopped_and_the_pipe_named(
    workspace: Path, tmp_path: Path, where: str, args: list[str]
) -> None:
    make_repo(workspace)
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.py").write_text("x = 1\n")
    if where.startswith("outside/"):
        pipe = _pipe(tmp_path / where)
        key = "core.excludesFile" if "excludes" in where else "core.attributesFile"
        git(workspace, "config", key, str(pipe))
    else:
        (workspace / where).unlink(missing_ok=True)
        pipe = _pipe(workspace / where)
    with pytest.raises(GitFailed) as failed:
        run_git(args, workspace)
    assert "named pipe" in str(failed.value), failed.value
    assert str(pipe) in str(failed.value)
    pipe.unlink()
    assert run_git(args, workspace).returncode == 0  # nothing of the pipe is left behind


def test_a_listing_says_which_pipe_stopped_it(workspace: Path) -> None:
    make_repo(workspace)
    pipe = _pipe(workspace / "sub" / ".gitignore")
    with pytest.raises(RuntimeError, match="named pipe") as failed:
        listed_files(str(workspace), hidden=False)
    assert str(pipe) in str(failed.value)


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
def test_jailed_git_waiting_on_a_pipe_is_stopped(workspace: Path) -> None:
    make_repo(workspace)
    pipe = _pipe(workspace / "sub" / ".gitignore")
    with pytest.raises(GitFailed, match="named pipe") as failed:
        run_git(LISTING, workspace, jail_workspace=workspace)
    assert str(pipe) in str(failed.value)


def test_git_reading_a_huge_sparse_gitignore_is_stopped_and_the_file_named(
    workspace: Path,
) -> None:
    make_repo(workspace)
    rules = workspace / "sub" / ".gitignore"
    rules.parent.mkdir()
    with open(rules, "wb") as file:  # no block on disk, yet git would read 8 GiB into memory
        file.truncate(8 << 30)
    with pytest.raises(GitFailed, match="file of rules of 8.0 GiB") as failed:
        run_git(LISTING, workspace)
    assert str(rules) in str(failed.value)
