"""A jailed block cannot make Vis read, on the host, a file the jail hides through the text
files Vis gives the model: instruction files, a trusted project's skills and command files.
The block can make these names (a project without ``.claude/``: the jail cannot keep a name
read-only before it exists) as links to a file outside the workspace or into VIS_HOME, which
the jail masks also where it lies inside the workspace."""

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
    print(open({target!r}).read())
except OSError as exc:
    print("jail holds:", type(exc).__name__)
os.makedirs(".claude/skills/leak", exist_ok=True)
os.makedirs(".claude/commands", exist_ok=True)
os.makedirs("sub", exist_ok=True)
open("sub/x.txt", "w").write("x\\n")
names = ".claude/skills/leak/SKILL.md", ".claude/commands/leak.md", "sub/AGENTS.md", "AGENTS.md"
for name in names:
    os.symlink({target!r}, name)
print("planted")
"""

READ = """
try:
    print(await doc("leak"))
except Exception as exc:
    print("no skill:", type(exc).__name__)
print(await cat("sub/x.txt"))
"""


@pytest.mark.parametrize("where", ["outside", "vis_home"])
async def test_text_files_a_jailed_block_links_to_hidden_files_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    project = tmp_path / "project"
    (project / ".vis").mkdir(parents=True)
    vis_home = project / "state" if where == "vis_home" else tmp_path / "vis-home"
    vis_home.mkdir(exist_ok=True)
    monkeypatch.setenv("VIS_HOME", str(vis_home))
    target = vis_home / "config.toml" if where == "vis_home" else tmp_path / "outside.txt"
    target.write_text("# HOST-ONLY-7f3a\n")
    TrustStore(VisPaths.from_env()).trust(project)
    script = tmp_path / "s.yaml"
    steps = [
        {"code": PLANT.format(target=str(target))},
        {"text": "planted"},
        {"code": READ},
        {"text": "done"},
    ]
    script.write_text(yaml.safe_dump(steps))
    host = await Host.open(HostOptions(workspace=project, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("plant it")
        await session.submit("read it")
        command = await host.commands.run(session, "/leak")
        problems = host.commands.file_problems()
        requests = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert "jail holds:" in blocks[0].stdout and "planted" in blocks[0].stdout
    assert (project / ".claude/skills/leak/SKILL.md").is_symlink()
    assert "x\n" in blocks[1].stdout  # cat of a file in sub/ asks for sub/AGENTS.md
    sent = "".join(r.system + "".join(m.text for m in r.messages) for r in requests)
    assert "HOST-ONLY" not in sent
    assert not isinstance(command.data, PromptToSend) or "HOST-ONLY" not in command.data.text
    assert any("leak.md was not read" in p for p in problems)
