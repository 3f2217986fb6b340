"""Vis's test for "git takes this folder as a repository" says what git itself says, folder
shape by folder shape: a bare repository git finds where it runs, and what it does not take."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from vis_core.system.git_dirs import is_repository

REF = "ref: refs/heads/main\n"
SHAPES: dict[str, dict[str, str | None]] = {  # a file's text, or None: a folder
    "bare": {"HEAD": REF, "objects": None, "refs": None},
    "detached": {"HEAD": "ab" * 20 + "\n", "objects": None, "refs": None},
    "spaced ref": {"HEAD": "ref:\t  refs/x\n", "objects": None, "refs": None},
    "objects a program": {"HEAD": REF, "objects": "", "refs": None},
    "commondir": {"HEAD": REF, "commondir": "shared\n", "shared": None},
    "prose HEAD": {"HEAD": "the head of the list\n", "objects": None, "refs": None},
    "no objects": {"HEAD": REF, "refs": None, "config": "[core]\n"},
    "no refs": {"HEAD": REF, "objects": None},
    "no HEAD": {"objects": None, "refs": None, "config": "[core]\n"},
    "head folder": {"HEAD/x": "", "objects": None, "refs": None},
}
NOT_GITS = ("prose HEAD", "no objects", "no refs", "no HEAD", "head folder")
# where git would refuse the folder with an error, Vis takes it for a repository all the same
WIDER = {
    "a .git git cannot read": {".git": "gitdir: /nowhere\n"},
    "objects a plain file": {"HEAD": REF, "objects": "", "refs": None},
}


def git_takes(folder: Path) -> bool:
    """What git says of ``folder`` (no folder above it is looked at)."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(folder.parent)}
    env.pop("GIT_DIR", None)
    done = subprocess.run(
        ["git", "-c", "safe.bareRepository=all", "rev-parse", "--git-dir"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode == 0


def make(folder: Path, entries: dict[str, str | None]) -> None:
    folder.mkdir()
    for name, text in entries.items():
        path = folder / name
        if text is None:
            path.mkdir()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if "commondir" in entries:  # the folder it names holds what git needs
        (folder / "shared" / "objects").mkdir()
        (folder / "shared" / "refs").mkdir()


@pytest.mark.parametrize("shape", SHAPES)
def test_a_folder_is_a_repository_exactly_when_git_takes_it_for_one(
    tmp_path: Path, shape: str
) -> None:
    folder = tmp_path / "f"
    make(folder, SHAPES[shape])
    if shape == "objects a program":
        (folder / "objects").chmod(0o755)  # git asks access(X_OK)
    expected = shape not in NOT_GITS
    assert git_takes(folder) is expected  # the case is what the table says
    assert is_repository(folder) is expected


@pytest.mark.parametrize("shape", WIDER)
def test_a_folder_git_would_refuse_with_an_error_counts_as_a_repository(
    tmp_path: Path, shape: str
) -> None:
    folder = tmp_path / "f"
    make(folder, WIDER[shape])
    assert not git_takes(folder)
    assert is_repository(folder)


def test_a_head_linked_into_refs_counts_and_a_pipe_is_never_opened(tmp_path: Path) -> None:
    """git takes a HEAD that is a link into refs/; a pipe at HEAD is not read (the look
    would wait for ever for a writer)."""
    linked = tmp_path / "linked"
    make(linked, {"objects": None, "refs": None})
    (linked / "HEAD").symlink_to("refs/heads/main")
    assert git_takes(linked) and is_repository(linked)
    piped = tmp_path / "piped"
    make(piped, {"objects": None, "refs": None})
    os.mkfifo(piped / "HEAD")
    assert not is_repository(piped)
