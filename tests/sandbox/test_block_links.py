"""A jailed block's links are among the files it created, changed or removed: a link made,
retargeted or removed, a file replaced by a link (not "removed"), each target shown as text
and never followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.model.block import FileChangeKind

from .hostile import BWRAP_PROBLEM, make_repo, run_blocks

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

MAKE = """
import os
os.symlink({secrets!r}, "leak1")
os.remove("a.txt")
os.symlink({secrets!r}, "a.txt")
os.symlink("/home", "vh")
os.symlink("odd\\nname\\u202e", "leak3")
print("made")
"""

MOVE = """
import os
os.remove("leak1")
os.symlink("elsewhere", "leak1")
os.remove("vh")
os.remove("a.txt")
open("a.txt", "w").write("back\\n")
print("moved")
"""


def listed(block) -> dict[str, tuple[FileChangeKind, str]]:
    return {c.path: (c.kind, c.note) for c in block.files}


@pytest.mark.parametrize("repository", [True, False], ids=["git", "folder"])
async def test_links_a_block_makes_or_moves_are_listed_with_their_targets(
    workspace: Path, tmp_path: Path, repository: bool
) -> None:
    secrets = tmp_path / "outside" / "secrets"
    secrets.parent.mkdir()
    secrets.write_text("TOP SECRET\n")
    if repository:
        (workspace / "notes.txt").write_text("one\n")
        (workspace / "a.txt").write_text("a\n")
        make_repo(workspace)
    else:
        (workspace / "a.txt").write_text("a\n")
    made, moved = (
        await run_blocks(workspace, tmp_path, MAKE.format(secrets=str(secrets)), MOVE)
    ).blocks
    assert made.stdout.strip() == "made" and moved.stdout.strip() == "moved", made.error
    target = repr(str(secrets))
    assert listed(made) == {
        "a.txt": (FileChangeKind.CHANGED, f"replaced by a link to {target}"),
        "leak1": (FileChangeKind.CREATED, f"a link to {target}"),
        "leak3": (FileChangeKind.CREATED, "a link to 'odd\\nname\\u202e'"),
        "vh": (FileChangeKind.CREATED, "a link to '/home'"),
    }
    assert all("TOP SECRET" not in c.diff for c in (*made.files, *moved.files))
    shown = listed(moved)
    assert shown["leak1"] == (
        FileChangeKind.CHANGED,
        f"a link, now to 'elsewhere' (was to {target})",
    )
    assert shown["vh"] == (FileChangeKind.REMOVED, "a link to '/home'")
    assert shown["a.txt"][0] is FileChangeKind.CHANGED
    assert shown["a.txt"][1] == f"was a link to {target}"
    assert set(shown) == {"a.txt", "leak1", "vh"}
