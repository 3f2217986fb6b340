"""The folders on the way to a protected path in the workspace (the git folder a ``.git`` file
names, ``gitdir: sub/gitdir``) are mount points in the jail: a block cannot rename one and
leave a link in its place, which the next jail's read-only bind (by path) would follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, run_blocks

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

SWAP = """
import os
try:
    os.rename("sub", "moved")
    os.symlink("/tmp", "sub")
    print("swapped")
except OSError as exc:
    print("refused:", exc.strerror)
try:
    open("sub/gitdir/HEAD", "a")
except OSError as exc:
    print("gitdir read-only:", exc.strerror)
"""


async def test_a_folder_on_the_way_to_a_gitdir_cannot_be_swapped(
    tmp_path: Path, vis_home: Path
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sub" / "gitdir").mkdir(parents=True)
    (workspace / "sub" / "gitdir" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git").write_text("gitdir: sub/gitdir\n")
    (vis_home / "config.toml").write_text("jail = true\n")
    (block,) = (await run_blocks(workspace, tmp_path, SWAP)).blocks
    assert block.error is None, block.error
    assert "refused: Device or resource busy" in block.stdout, block.stdout
    assert "gitdir read-only: Read-only file system" in block.stdout
    assert (workspace / "sub" / "gitdir").is_dir() and not (workspace / "sub").is_symlink()
