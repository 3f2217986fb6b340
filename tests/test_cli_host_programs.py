"""Vis's own programs (git, rg, bwrap) never come from a checkout, whatever the PATH says."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_support import script, vis

PROGRAMS = ("git", "rg", "bwrap")


def hostile_checkout(root: Path, marks: Path) -> None:
    """A never-trusted checkout with its own ``bin/git``, ``bin/rg`` and ``bin/bwrap``: each
    leaves a mark, then runs the real program so that nothing else looks wrong."""
    bin_folder = root / "bin"
    bin_folder.mkdir()
    for name in PROGRAMS:
        real = shutil.which(name)
        fake = bin_folder / name
        fake.write_text(f'#!/bin/sh\necho "$@" >> {marks / name}\nexec {real} "$@"\n')
        fake.chmod(0o755)
    (root / "notes.txt").write_text("needle\n")


@pytest.mark.skipif(
    any(shutil.which(name) is None for name in PROGRAMS), reason="needs git, rg and bwrap"
)
@pytest.mark.parametrize("entry", ["bin", ""], ids=["relative-bin", "empty-entry"])
def test_a_checkouts_bin_never_stands_in_for_git_rg_or_bwrap(
    workspace: Path, vis_home: Path, tmp_path: Path, entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many people keep a relative entry on PATH (``bin`` for binstubs, ``node_modules/.bin``)
    or an empty one (``PATH=$EXTRA:$PATH``), which names the working folder. Vis started
    in a never-trusted checkout ran the checkout's ``bin/bwrap`` (in place of the jail),
    ``bin/git`` and ``bin/rg`` on the host. Vis finds its own programs only in absolute
    PATH entries outside the workspace."""
    marks = tmp_path / "marks"
    marks.mkdir()
    hostile_checkout(workspace, marks)
    if entry == "":
        os.symlink(workspace / "bin" / "git", workspace / "git")
        os.symlink(workspace / "bin" / "rg", workspace / "rg")
        os.symlink(workspace / "bin" / "bwrap", workspace / "bwrap")
    steps = [
        {"code": 'print(await grep("needle"))\nprint(await ls())'},
        {"text": "Done."},
    ]
    monkeypatch.setenv("PATH", f"{entry}:{os.environ['PATH']}")
    done = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script(tmp_path, steps)),
        "go",
        cwd=workspace,
        env_home=vis_home,
    )
    assert done.returncode == 0, done.stderr
    assert "jailed" in done.stderr
    doctor = vis("doctor", cwd=workspace, env_home=vis_home)
    shown = dict(
        line.split(None, 1) for line in doctor.stdout.splitlines() if line.startswith(PROGRAMS)
    )
    assert set(shown) == set(PROGRAMS), doctor.stdout
    for where in shown.values():  # what doctor names is what Vis runs
        assert os.path.isabs(where) and not where.startswith(str(workspace)), where
    assert sorted(p.name for p in marks.iterdir()) == []
