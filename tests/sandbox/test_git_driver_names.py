"""A git driver whose name git's ``-c`` cannot spell is no way past Vis's neutral git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vis_core.system.git import GitFailed, run_git

from .hostile import BWRAP_PROBLEM, git, make_repo, run_blocks

# ``-c filter.x=y.clean=cat`` sets ``filter.x`` to ``y.clean=cat``: git splits at the first "="
FILTER = '[filter "x=y"]\n\tclean = {script}\n'


def hostile_filter(root: Path, marker: Path) -> None:
    script = root / "clean.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    (root / ".gitattributes").write_text("* filter=x=y\n")
    with (root / ".git" / "config").open("a") as config:
        config.write(FILTER.format(script=script))


def test_vis_runs_no_git_where_a_driver_name_holds_an_equals_sign(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_repo(workspace)
    marker = tmp_path / "ran.txt"
    hostile_filter(workspace, marker)
    notes = workspace / "notes.txt"
    notes.write_text("two\n")  # the same size: git compares the content through the filter
    os.utime(notes, (0, 0))
    with pytest.raises(GitFailed, match="x=y"):
        run_git(["status", "--porcelain"], workspace)
    assert not marker.exists()
    git(workspace, "status", "--porcelain")  # the person's own git: the attack is real
    assert marker.exists()


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_a_repository_a_jailed_block_makes_runs_nothing_on_the_host(
    tmp_path: Path, vis_home: Path
) -> None:
    """The jail keeps an existing ``.git`` read-only, but in a workspace without one a block
    makes its own; ``draft_create()`` then runs git there on the host (``add -A``: the
    clean filter)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("one\n")
    (vis_home / "config.toml").write_text("jail = true\n")
    marker = tmp_path / "ran.txt"
    setup = f"""
import os
open("clean.sh", "w").write("#!/bin/sh\\necho ran >> {marker}\\ncat\\n")
os.chmod("clean.sh", 0o755)
open("filter.cfg", "w").write({FILTER.format(script=workspace / "clean.sh")!r})
# one command: a jail started once .git exists keeps it read-only
made = await shell(
    "git init -q && git add -A && git -c user.name=a -c user.email=b commit -qm one && "
    "cat filter.cfg >> .git/config && echo '* filter=x=y' > .gitattributes"
)
print((await made.wait(30)).exit_code)
"""
    outcome = await run_blocks(workspace, tmp_path, setup, 'await draft_create("escape")')
    made, entered = outcome.blocks
    assert made.stdout.split() == ["0"], made
    assert entered.error is not None and "GitFailed" in entered.error, entered
    assert "'filter.x=y.clean'" in entered.error
    assert not marker.exists(), marker.read_text()
