"""The files of a git repository nested in the workspace (one a block makes, a vendored
clone, a submodule's checkout) are listed in a block's row and put back by ``/undo``: Git's
listing of the workspace names such a repository as one entry, so each is listed by its own
Git (or by Vis's walk where that Git fails)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from vis_core.model.block import FileChangeKind
from vis_core.tools.block_changes import BlockChanges
from vis_core.tools.checkpoints import Checkpoints
from vis_core.tools.ignore import listed_states

from .undone_turns import turn_then_undo


def _git(folder: Path, *args: str) -> None:
    base = ["git", "-C", str(folder), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*base, *args], check=True, capture_output=True)


def _repository(folder: Path, files: dict[str, str]) -> None:
    """A repository in ``folder`` with ``files`` committed."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    _git(folder, "add", ".")
    _git(folder, "commit", "-q", "-m", "i")


async def test_a_file_in_a_repository_a_block_made_is_listed_and_undone(
    workspace: Path, tmp_path: Path
) -> None:
    """A block ran ``git init pkg`` and wrote ``pkg/evil.py``: Git's listing of the
    workspace named only ``pkg/``, so the row showed no file and /undo left ``evil.py``.
    Nothing of ``pkg/.git`` is listed."""
    _repository(workspace, {"app.py": "print('hi')\n"})
    code = (
        "await (await shell('git init -q pkg')).wait(60)\n"
        "open('pkg/evil.py', 'w').write('import os\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    assert [(c.path, c.kind) for c in blocks[0].files] == [("pkg/evil.py", FileChangeKind.CREATED)]
    assert "+import os\n" in blocks[0].files[0].diff
    assert report.removed == ("pkg/evil.py",)
    assert not (workspace / "pkg" / "evil.py").exists()


async def test_a_nested_repositorys_own_excludes_hide_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    """A block that made a repository could name its new files in that repository's
    ``.git/info/exclude`` or in an excludes file its configuration names: a nested
    repository is listed by its ``.gitignore`` files only."""
    _repository(workspace, {"app.py": "print('hi')\n"})
    code = (
        "await (await shell('git init -q pkg')).wait(60)\n"
        "open('pkg/.git/info/exclude', 'w').write('evil.py\\n')\n"
        "open('pkg/.git/config', 'a').write('[core]\\n\\texcludesFile = skip\\n')\n"
        "open('pkg/skip', 'w').write('skip\\nhook.py\\n')\n"
        "open('pkg/evil.py', 'w').write('import os\\n')\n"
        "open('pkg/hook.py', 'w').write('import os\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    made = ("pkg/evil.py", "pkg/hook.py", "pkg/skip")
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        (path, FileChangeKind.CREATED) for path in made
    ]
    assert report.removed == made


async def test_a_nested_repositorys_work_tree_and_gitlinks_hide_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    """A repository an earlier block made (or an unpacked checkout holds) could point its
    ``core.worktree`` elsewhere (its Git then listed nothing of its folder), or name a
    subfolder in its index as a gitlink (Git does not look in one, and it holds no ``.git``
    to list by): both hid what a later block wrote there from the row and /undo. A nested
    repository's work tree is its folder, and a folder its Git names that is no repository
    is walked."""
    _repository(workspace, {"app.py": "print('hi')\n"})
    pkg = workspace / "pkg"
    _repository(pkg, {"mod.py": "x = 1\n"})
    (pkg / "sub").mkdir()
    _git(pkg, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub")
    _git(pkg, "config", "core.worktree", str(tmp_path))
    code = (
        "open('pkg/evil.py', 'w').write('import os\\n')\n"
        "open('pkg/sub/hook.py', 'w').write('import os\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    made = ("pkg/evil.py", "pkg/sub/hook.py")
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        (path, FileChangeKind.CREATED) for path in made
    ]
    assert report.removed == made


@pytest.mark.parametrize("tracked", [False, True], ids=["clone", "submodule"])
async def test_an_edit_in_an_existing_nested_repository_is_listed_and_undone(
    workspace: Path, tmp_path: Path, tracked: bool
) -> None:
    """A vendored clone (untracked, ``vendor/lib/``) or a submodule's checkout (a gitlink
    of the workspace's repository) was one entry of Git's listing: a block that edited and
    added files in it listed none of them, and /undo could not put them back. Its own
    ``.gitignore`` applies in it."""
    _repository(workspace, {"app.py": "print('hi')\n"})
    lib = workspace / "vendor" / "lib"
    _repository(lib, {"setup.py": "SAFE = True\n", ".gitignore": "build/\n"})
    if tracked:
        _git(workspace, "add", "vendor/lib")
        _git(workspace, "commit", "-q", "-m", "vendor")
    code = (
        "import os\n"
        "open('vendor/lib/setup.py', 'w').write('SAFE = False\\n')\n"
        "open('vendor/lib/hook.py', 'w').write('evil\\n')\n"
        "os.mkdir('vendor/lib/build'); open('vendor/lib/build/out.o', 'w').write('o\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        ("vendor/lib/hook.py", FileChangeKind.CREATED),
        ("vendor/lib/setup.py", FileChangeKind.CHANGED),
    ]
    assert "-SAFE = True\n+SAFE = False\n" in blocks[0].files[1].diff
    assert report.restored == ("vendor/lib/setup.py",)
    assert report.removed == ("vendor/lib/hook.py",)
    assert (lib / "setup.py").read_text() == "SAFE = True\n"
    assert (lib / "build" / "out.o").exists()  # ignored by the clone's own rules


@pytest.mark.parametrize("tracked", [False, True], ids=["clone", "submodule"])
async def test_a_gitignore_written_in_a_nested_repository_hides_nothing(
    workspace: Path, tmp_path: Path, tracked: bool
) -> None:
    """A block that writes a ``.gitignore`` naming its new file in a nested repository
    still shows the file and the ``.gitignore``, and /undo takes both back."""
    _repository(workspace, {"app.py": "print('hi')\n"})
    lib = workspace / "lib"
    _repository(lib, {"mod.py": "x = 1\n"})
    if tracked:
        _git(workspace, "add", "lib")
        _git(workspace, "commit", "-q", "-m", "lib")
    code = (
        "open('lib/.gitignore', 'w').write('hook.py\\n')\n"
        "open('lib/hook.py', 'w').write('evil\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        ("lib/.gitignore", FileChangeKind.CREATED),
        ("lib/hook.py", FileChangeKind.CREATED),
    ]
    assert report.removed == ("lib/.gitignore", "lib/hook.py")
    assert sorted(p.name for p in lib.iterdir()) == [".git", "mod.py"]


def test_a_nested_repository_git_refuses_is_walked(workspace: Path) -> None:
    """Where Git refuses a nested repository (a driver Vis cannot switch off), Vis's walk
    lists it, by its ``.gitignore`` files; its ``.git`` stays out."""
    _repository(workspace, {"app.py": "print('hi')\n"})
    lib = workspace / "lib"
    _repository(lib, {"mod.py": "x = 1\n", ".gitignore": "*.log\n"})
    (lib / "run.log").write_text("log\n")
    with (lib / ".git" / "config").open("a") as config:
        config.write('[filter "a=b"]\n\tclean = cat\n')
    cut = len(str(workspace)) + 1
    listed = {path[cut:] for path in listed_states(str(workspace), hidden=True, rules=True)}
    assert listed == {"app.py", "lib/mod.py", "lib/.gitignore"}


def test_a_nested_clones_files_cost_no_copy(tmp_path: Path) -> None:
    """The files a nested repository holds unchanged are named by its git blobs, as the
    workspace's own: a checkpoint copied each (a vendored clone of thousands of files
    filled the copy budget, newest first, and the person's older untracked file went
    without one). A change in the clone is shown and undone from the clone's git."""
    ws, private = tmp_path / "ws", tmp_path / "private"
    _repository(ws, {"app.py": "print('hi')\n"})
    (ws / "notes.txt").write_text("my notes\n")
    os.utime(ws / "notes.txt", (1_700_000_000, 1_700_000_000))  # older than the clone
    lib = ws / "vendor" / "lib"
    _repository(lib, {"setup.py": "SAFE = True\n", "other.py": "x = 1\n"})
    points = Checkpoints(ws, private, max_new_files=1)
    taken = points.take("t1", 1)
    assert taken is not None
    assert [p.read_bytes() for p in (private / "blobs").iterdir()] == [b"my notes\n"]
    assert taken.files["vendor/lib/setup.py"][3].startswith("git:")

    watch = BlockChanges(points, "t1")
    watch.start()
    (lib / "setup.py").write_text("SAFE = False\n")
    (ws / "notes.txt").write_text("lost\n")
    changes = {c.path: c for c in watch.finish()}
    assert "-SAFE = True\n+SAFE = False\n" in changes["vendor/lib/setup.py"].diff
    assert "-my notes\n+lost\n" in changes["notes.txt"].diff
    report = points.restore(1)
    assert report.restored == ("notes.txt", "vendor/lib/setup.py")
    assert (lib / "setup.py").read_text() == "SAFE = True\n"
    assert (ws / "notes.txt").read_text() == "my notes\n"


def test_a_repository_made_during_the_session_keeps_no_file_from_undo(tmp_path: Path) -> None:
    """A repository made after the session's first listing (a block's ``git init docs``,
    and a command it left running ``git add``-ing there) is the model's to rewrite: a
    checkpoint named the person's edit there by that repository's blob, so a later block
    that removed the folder with its ``.git`` (or forged its index) took the edit from
    /undo. Only the nested repositories of the first listing vouch for a file's bytes; the
    others' files are copied."""
    ws, private = tmp_path / "ws", tmp_path / "private"
    _repository(ws, {"app.py": "print('hi')\n"})
    docs = ws / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("my notes\n")
    points = Checkpoints(ws, private)
    assert points.take("t1", 1) is not None
    subprocess.run(["git", "init", "-q", str(docs)], check=True)  # turn 1's block
    (docs / "notes.txt").write_text("my notes, edited between the turns\n")
    _git(docs, "add", "notes.txt")  # the command it left running
    taken = points.take("t2", 2)
    assert taken is not None
    assert not taken.files["docs/notes.txt"][3].startswith("git:")
    subprocess.run(["rm", "-rf", str(docs)], check=True)  # turn 2's block
    report = points.restore(1)
    assert report.restored == ("docs/notes.txt",)
    assert (docs / "notes.txt").read_text() == "my notes, edited between the turns\n"
