"""Deleting a draft's folder never reaches outside it, even as an ordinary user whose
draft holds read-only folders, while the model's code swaps one of them for a link."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from vis_core.drafts.files import remove_tree

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
NAMES = [f"n{i:04}.txt" for i in range(2000)]

# Run as an ordinary user: a draft folder `a` the model made read-only holds `aa`; a thread
# waits for the first file of `aa` to go, then swaps `a` for a link to a folder outside that
# holds `aa` with files of the same names. Removing `aa` from read-only `a` fails; the old
# error handler then made `a` writable and removed `aa` again by path: through the link.
ATTACK = """
import os, sys, threading
from pathlib import Path
from vis_core.drafts.files import remove_tree

base, names = Path(sys.argv[1]), {names!r}
draft, outside = base / "draft", base / "outside"
for top, text in ((draft, "draft"), (outside, "HOST-ONLY")):
    (top / "a" / "aa").mkdir(parents=True)
    for name in names:
        (top / "a" / "aa" / name).write_text(text)
os.chmod(draft / "a", 0o500)
first = draft / "a" / "aa" / os.listdir(draft / "a" / "aa")[0]  # the first the removal meets
def swap():
    while os.path.lexists(first):
        pass
    os.rename(draft / "a", draft / "real-a")
    os.symlink(outside / "a", draft / "a")
worker = threading.Thread(target=swap, daemon=True)
worker.start()
try:
    remove_tree(draft)
except OSError as exc:
    print("not removed:", exc)
worker.join(5)
print("swapped:", not worker.is_alive())
"""


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder the ordinary user owns (tmp_path is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="vis-remove-tree-"))
    try:
        if os.geteuid() == 0:
            os.chown(base, NOBODY, NOBODY)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None, reason="no setpriv to drop root"
)
def test_removing_a_draft_never_changes_a_folder_swapped_in_for_a_link(
    shared_folder: Path,
) -> None:
    program = ATTACK.format(names=NAMES)
    command = [sys.executable, "-c", textwrap.dedent(program), str(shared_folder)]
    if os.geteuid() == 0:
        command = [*AS_NOBODY, *command]
        runs = subprocess.run([*command[:-3], "-c", "import vis_core.drafts.files"], check=False)
        if runs.returncode != 0:
            pytest.skip(f"Vis's Python ({sys.executable}) cannot be run by an ordinary user here")
    done = subprocess.run(command, capture_output=True, text=True, cwd=shared_folder)
    assert "swapped: True" in done.stdout, (done.stdout, done.stderr[-2000:])
    outside = shared_folder / "outside" / "a"
    assert sorted(os.listdir(outside / "aa")) == NAMES
    assert {(outside / "aa" / name).read_text() for name in NAMES} == {"HOST-ONLY"}
    assert oct(outside.stat().st_mode & 0o777) == oct(0o755)  # not made writable for Vis


def test_a_read_only_tree_and_links_in_it_are_removed(tmp_path: Path) -> None:
    draft, outside = tmp_path / "draft", tmp_path / "outside"
    (draft / "ro" / "deep").mkdir(parents=True)
    (draft / "ro" / "deep" / "f.txt").write_text("x")
    (draft / "none").mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (draft / "ro" / "out").symlink_to(outside, target_is_directory=True)
    os.chmod(draft / "ro" / "deep", 0o500)
    os.chmod(draft / "ro", 0o500)
    os.chmod(draft / "none", 0o000)
    remove_tree(draft)
    assert not draft.exists() and (outside / "keep.txt").read_text() == "keep"
    remove_tree(draft)  # gone already: nothing to do
