"""Guides and skills shipped next to an extension's entry file reach ``apropos`` and ``doc``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from vis_core.events import BlockFinished
from vis_core.extension_host.guides import extension_guides
from vis_core.extension_host.loader import load_extensions
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus
from vis_core.paths import VisPaths

ENTRY = '''"""A folder extension with a guide and a skill."""
import vis_core.extension as vis


def ping() -> str:
    """Answer pong."""
    return "pong"


vis.register_extension(vis.Extension(
    name="pinger", alias="ping", description="Ping.", symbols=[vis.Symbol(ping)],
))
'''


def _install_pinger(root: Path) -> Path:
    folder = root / "pinger"
    (folder / "guides").mkdir(parents=True)
    (folder / "skills" / "warm-up").mkdir(parents=True)
    (folder / "__init__.py").write_text(ENTRY, encoding="utf-8")
    (folder / "guides" / "latency.md").write_text(
        "# Measure latency\n\nTime a few pings.\n\n## Reading the histogram\n\nBars.\n",
        encoding="utf-8",
    )
    (folder / "skills" / "warm-up" / "SKILL.md").write_text(
        textwrap.dedent(
            """\
            ---
            name: warm-up
            description: Prime caches before a benchmark.
            ---
            # Warm up the service

            ## Steps
            1. Ping ten times.
            """
        ),
        encoding="utf-8",
    )
    (root / "single.py").write_text(
        ENTRY.replace('"pinger"', '"single"')
        .replace('"ping"', '"single"')
        .replace("vis.Symbol(ping)", 'vis.Symbol(ping, name="single_ping")'),
        encoding="utf-8",
    )
    return folder


def test_folder_extension_guides_and_skills_are_found() -> None:
    _install_pinger(VisPaths.from_env().extensions_dir)
    loaded = load_extensions(bundled=None, include_packages=False)
    assert {e.name for e in loaded.enabled} == {"pinger", "single"}
    guides = {g.name: g for g in extension_guides(loaded)}
    assert set(guides) == {"ping.latency", "ping.warm-up"}  # the single file ships none
    latency = guides["ping.latency"]
    assert (latency.kind, latency.title) == ("guide", "Measure latency")
    assert "Reading the histogram" in latency.headings
    skill = guides["ping.warm-up"]
    assert (skill.kind, skill.title) == ("skill", "Warm up the service")
    assert skill.opening == "Prime caches before a benchmark."
    assert "---" not in skill.text and "## Steps" in skill.text


BLOCK = """
hits = await apropos("branch before you")
print("HITS", [(h.name, h.kind, h.summary) for h in hits])
print("BYNAME", [h.name for h in await apropos("^git\\\\.")])
print("DOC", await doc("git.history"))
print("DOCHIT", (await doc(hits[0]))[:40])
"""


async def test_apropos_finds_the_git_guide_by_a_heading_and_doc_reads_it(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": BLOCK}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        ended = await session.submit("how do I trace a change?")
    finally:
        await host.close()

    assert ended.status is TurnStatus.COMPLETED
    block = next(e for e in events if isinstance(e, BlockFinished))
    assert block.error is None, block.error
    out = block.stdout
    hits_line = next(line for line in out.splitlines() if line.startswith("HITS"))
    # "Review the branch before you report" is a heading, not in the title or opening
    assert "('git.history', 'guide', 'Trace a change through git history')" in hits_line
    byname = next(line for line in out.splitlines() if line.startswith("BYNAME"))
    assert "'git.status'" in byname and "'git.history'" in byname
    guide = (Path(__file__).parents[2] / "extensions/git/guides/history.md").read_text()
    assert guide.strip() in out
    assert "DOCHIT # Trace a change through git history" in out
