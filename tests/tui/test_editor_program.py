"""The person's editor never comes from a checkout's folder that a relative PATH entry names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vis_tui.editor import editor_command, run_editor


def test_a_checkouts_bin_does_not_stand_in_for_the_editor(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``EDITOR=nano`` and ``bin`` on PATH (binstubs): opening a file from the app in a
    never-trusted checkout ran the checkout's ``bin/nano``. The editor is looked up in
    absolute PATH entries outside the working folder only."""
    mark = tmp_path / "ran"
    fake = workspace / "bin" / "vis-test-editor"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho ran > {mark}\n")
    fake.chmod(0o755)
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("PATH", f"bin:{os.environ['PATH']}")
    command = editor_command(workspace / "notes.txt", {"EDITOR": "vis-test-editor"})
    assert command is not None
    problem = run_editor(command)
    assert not mark.exists()
    assert problem is not None and "vis-test-editor" in problem and "not found" in problem
