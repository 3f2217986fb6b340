"""skill_file() of a named pipe in a skill's folder (a checkout can hold one) says it is not a
file at once; it never waits for a writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from processes import without_waiting_on

from vis_core.skills.found import SkillSource, read_skill
from vis_core.skills.session import read_skill_file


def test_a_pipe_in_a_skill_folder_is_refused_at_once(tmp_path: Path) -> None:
    folder = tmp_path / ".agents" / "skills" / "pdf"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs.\n---\nRead them.\n")
    os.mkfifo(folder / "notes.md")
    skill = read_skill(folder, SkillSource.PROJECT, within=tmp_path)
    assert skill is not None
    with pytest.raises(ValueError, match="not a regular file"):
        without_waiting_on(folder / "notes.md", lambda: read_skill_file(skill, "notes.md"))
