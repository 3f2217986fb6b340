"""Huge files a block makes in an instant (sparse) are read only up to a bound: a .gitignore by
the listing outside git (every checkpoint, ls and grep runs it), a file grown after the
checkpoint's scan by the checkpoint, and cat (patch and grep read the same way) refuses one
above 256 MiB."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import bytes_read

from vis_core.tools.ignore import MAX_IGNORE_BYTES, listed_files

HUGE = 2 << 30  # sparse: no block on disk, yet 2 GiB to read


def test_a_huge_gitignore_is_read_up_to_a_bound(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "kept.py").write_text("x = 1\n")
    with open(workspace / "sub" / ".gitignore", "wb") as rules:
        rules.write(b"*.log\n")
        rules.truncate(HUGE)
    (workspace / "sub" / "gone.log").write_text("log\n")
    before = bytes_read()
    found = listed_files(str(workspace), hidden=False)
    assert bytes_read() - before < 4 * MAX_IGNORE_BYTES
    assert str(workspace / "sub" / "kept.py") in found
    assert str(workspace / "sub" / "gone.log") not in found  # its first rules still count


def test_a_file_grown_after_the_checkpoint_scan_is_not_read_past_its_size(
    tmp_path: Path,
) -> None:
    from vis_core.tools.checkpoints import Checkpoints

    workspace = tmp_path / "ws"
    workspace.mkdir()
    grown = workspace / "grown.txt"
    grown.write_text("small\n")
    scanned = {"grown.txt": grown.stat()}  # what the scan saw
    with open(grown, "r+b") as file:  # then a block made it a sparse 2 GiB
        file.truncate(HUGE)
    checkpoints = Checkpoints(workspace, tmp_path / "private")
    before = bytes_read()
    kept = checkpoints._keep_newest(["grown.txt"], scanned)
    assert bytes_read() - before < 64 << 20
    assert kept.get("grown.txt") is None  # not kept: it is no longer what was listed


def test_cat_refuses_a_huge_file_without_reading_it_whole(tmp_path: Path) -> None:
    from vis_core.tools import ToolContext
    from vis_core.tools.files import cat_file

    workspace = tmp_path / "ws"
    workspace.mkdir()
    with open(workspace / "big.log", "wb") as file:
        file.write(b"first line\n")
        file.truncate(HUGE)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    before = bytes_read()
    with pytest.raises(OSError, match="big.log is larger than 256") as failed:
        cat_file(ctx, "big.log")
    assert bytes_read() - before < 512 << 20
    assert "grep()" in str(failed.value)
