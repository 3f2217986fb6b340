"""Real git repositories and folders for the drafts tests."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from vis_core.drafts import Drafts
from vis_core.paths import VisPaths
from vis_core.store import Store


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "person@example.com")
    git(root, "config", "user.name", "Person")
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("bee\n")
    (root / ".gitignore").write_text("ignored/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


@pytest.fixture
def repo(workspace: Path) -> Path:
    return make_repo(workspace)


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    paths = VisPaths.from_env()
    store = Store(paths.data_dir / "vis.db")
    return Drafts(store, paths.data_dir)


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """``path`` cannot be replaced, renamed or linked while inside (``chattr +i``: a real
    failure also for root, who passes permission bits)."""
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not available here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
