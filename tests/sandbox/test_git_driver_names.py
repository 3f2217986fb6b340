"""Vis's own git on the host runs no driver of a repository: not one whose name git's ``-c``
cannot spell, and none in a repository a jailed block made (and can rewrite as git runs)."""

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


@pytest.mark.parametrize(
    "name", [b"", b"\xff", "caf\u00e9".encode()], ids=["empty", "not-utf8", "utf8"]
)
def test_a_driver_named_empty_or_not_in_utf8_is_switched_off_too(
    tmp_path: Path, name: bytes
) -> None:
    """git runs a filter named ``""`` (``* filter=`` in .gitattributes) and one whose name is
    not UTF-8; Vis's listing missed the first and switched off a replaced-character name for
    the second, so an unpacked checkout's filter ran on the host at the first checkpoint."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_repo(workspace)
    marker = tmp_path / "ran.txt"
    script = workspace / "clean.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    (workspace / ".gitattributes").write_bytes(b"* filter=" + name + b"\n")
    with (workspace / ".git" / "config").open("ab") as config:
        config.write(b'[filter "' + name + b'"]\n\tclean = ' + bytes(script) + b"\n")
    notes = workspace / "notes.txt"
    notes.write_text("two\n")  # the same size: git compares the content through the filter
    os.utime(notes, (0, 0))
    run_git(["status", "--porcelain"], workspace)
    run_git(["add", "--renormalize", "."], workspace)  # cleans every file, whatever its stat
    assert not marker.exists(), marker.read_text()
    git(workspace, "add", "--renormalize", ".")  # the person's own git: the attack is real
    assert marker.exists()


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_vis_runs_no_git_in_a_repository_a_jailed_block_made(
    tmp_path: Path, vis_home: Path
) -> None:
    """The jail keeps an existing ``.git`` read-only, but in a workspace without one a block
    makes its own, which the sandbox's jail (started before it) leaves writable. Vis's git
    neutralizes the drivers its config names when it starts, so a block that rewrites the
    config meanwhile got one past it (a thread swapping .git/config won that race at the
    first ``draft_create()``: ``add -A`` ran its clean filter on the host). Vis runs no git
    there: the draft is a copy."""
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
    enter = 'print((await draft_create("escape"))["backend"])'
    outcome = await run_blocks(workspace, tmp_path, setup, enter)
    assert [b.stdout.split() for b in outcome.blocks] == [["0"], ["copy"]], outcome.blocks
    assert not marker.exists(), marker.read_text()
