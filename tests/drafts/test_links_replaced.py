"""A draft that replaced a link with a folder is approved as that: the link goes, the folder
comes, and nothing is written (or looked at) through the link, inside the workspace or out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_support import script, vis

from .conftest import git, make_repo

REPLACE = """
import os
await draft_create("relink")
os.remove("{link}"); os.makedirs("{link}"); open("{link}/made.txt", "w").write("made\\n")
"""


@pytest.mark.parametrize("backend", ["worktree", "copy"])
@pytest.mark.parametrize("leads", ["outside", "inside"])
def test_a_link_the_draft_replaced_with_a_folder_is_approved_as_a_folder(
    workspace: Path, tmp_path: Path, vis_home: Path, backend: str, leads: str
) -> None:
    """``out -> a folder outside`` (vis drafts approve crashed with a traceback of Escape)
    and ``lib -> src`` (refused as 'would lose changes of yours' with nothing changed)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "x.txt").write_text("x\n")
    link = "out" if leads == "outside" else "lib"
    os.symlink(elsewhere if leads == "outside" else "src", workspace / link)
    if backend == "worktree":
        make_repo(workspace)
    code = REPLACE.format(link=link)
    responses = script(tmp_path, [{"code": code}, {"text": "done"}])
    ran = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "x",
        cwd=workspace,
        env_home=vis_home,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr

    approved = vis("drafts", "approve", "relink", cwd=workspace, env_home=vis_home)

    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert f"  {link}/made.txt" in approved.stdout.splitlines()
    made = workspace / link
    assert not made.is_symlink() and (made / "made.txt").read_text() == "made\n"
    assert not list(elsewhere.iterdir())  # nothing through the link
    assert sorted(os.listdir(workspace / "src")) == ["x.txt"]
    if backend == "worktree":
        assert git(workspace, "status", "--porcelain") == ""
        assert subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=workspace).returncode == 0
