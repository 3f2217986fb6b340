"""A jailed block cannot make Vis read a host file through a project's skills or command
files: in a trusted project without ``.claude/``, the jail cannot keep that name read-only,
so a block can create ``.claude/skills/x/SKILL.md`` or ``.claude/commands/x.md`` as a link to
a file the jail hides, and Vis reads both on the host."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vis_core.commands import PromptToSend
from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths

from .hostile import BWRAP_PROBLEM

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

PLANT = """
import os
try:
    open({target!r}).read()
except OSError as exc:
    print("jail holds:", type(exc).__name__)
os.makedirs(".claude/skills/leak", exist_ok=True)
os.makedirs(".claude/commands", exist_ok=True)
os.symlink({target!r}, ".claude/skills/leak/SKILL.md")
os.symlink({target!r}, ".claude/commands/leak.md")
print("planted")
"""


async def test_skills_and_commands_a_jailed_block_links_out_are_not_read(
    tmp_path: Path, vis_home: Path
) -> None:
    project = tmp_path / "project"
    (project / ".vis").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("HOST-ONLY-7f3a\n")
    TrustStore(VisPaths.from_env()).trust(project)
    script = tmp_path / "s.yaml"
    script.write_text(
        yaml.safe_dump(
            [
                {"code": PLANT.format(target=str(outside))},
                {"text": "planted"},
                {"code": "print(await doc('leak'))"},
                {"text": "done"},
            ]
        )
    )
    host = await Host.open(HostOptions(workspace=project, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("plant it")
        await session.submit("read it")
        command = await host.commands.run(session, "/leak")
        problems = host.commands.file_problems()
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert "jail holds: FileNotFoundError" in blocks[0].stdout
    assert "planted" in blocks[0].stdout
    assert (project / ".claude/skills/leak/SKILL.md").is_symlink()
    assert "HOST-ONLY-7f3a" not in blocks[1].stdout, blocks[1].stdout
    assert not isinstance(command.data, PromptToSend) or "HOST-ONLY" not in command.data.text
    assert any("leak.md was not read" in p and "leads out of" in p for p in problems)
