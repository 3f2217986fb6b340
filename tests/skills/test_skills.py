"""Skills in the SKILL.md format: listed in the system prompt, read by doc(), their files by
skill_file(); a project's only once it is trusted."""

from __future__ import annotations

from pathlib import Path

import yaml

from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths
from vis_core.providers.base import ModelRequest


def _skill(folder: Path, name: str, description: str, body: str, **files: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: >-\n  {description}\n---\n# {name}\n\n{body}\n"
    )
    for rel, text in files.items():
        target = folder / rel.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _setup(tmp_path: Path, vis_home: Path) -> Path:
    project = tmp_path / "project"
    (project / ".vis").mkdir(parents=True)
    _skill(project / ".vis/skills/lint-fix", "lint-fix", "Fix lint errors.", "Run ruff.")
    _skill(
        project / ".claude/skills/pdf",
        "pdf",
        "Fill PDF forms with the bundled script.",
        "Use scripts/fill.py.",
        **{"scripts__fill.py": "print('filling')\n"},
    )
    _skill(project / ".agents/skills/deploy", "deploy", "Deploy the site.", "Push to main.")
    _skill(
        vis_home / "skills/release",
        "release",
        "Cut a release: tag, changelog, upload.",
        "Follow reference.md.",
        **{"reference.md": "1. Tag it.\n"},
    )
    (project / "secret.txt").write_text("not a skill file\n")
    _skill(tmp_path / "elsewhere", "linked", "A skill behind a link.", "Linked.")
    (project / ".vis/skills/linked").symlink_to(tmp_path / "elsewhere")
    return project


CODE = """
print(await doc("release"))
print("REF:", await skill_file("release", "reference.md"))
print("LIST:", await skill_file("pdf"))
for bad in ("../../secret.txt", "/etc/passwd"):
    try:
        await skill_file("pdf", bad)
    except ValueError as exc:
        print("REFUSED:", exc)
"""


async def _requests(project: Path, script: Path) -> list[ModelRequest]:
    host = await Host.open(HostOptions(workspace=project, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("release it")
        return session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()


async def test_skills_in_every_place_are_listed_and_read(tmp_path: Path, vis_home: Path) -> None:
    project = _setup(tmp_path, vis_home)
    TrustStore(VisPaths.from_env()).trust(project)
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump([{"code": CODE}, {"text": "done"}]))
    requests = await _requests(project, script)

    system = requests[0].system
    assert "## Skills" in system
    for line in (
        "- `deploy`: Deploy the site.",
        "- `lint-fix`: Fix lint errors.",
        "- `pdf`: Fill PDF forms with the bundled script.",
        "- `release`: Cut a release: tag, changelog, upload.",
    ):
        assert line in system
    assert "Run ruff." not in system  # the body waits for doc()
    assert "`linked`" not in system  # a linked folder in the project is not followed
    result = requests[1].messages[-1].text
    assert "Follow reference.md." in result
    assert "Files of this skill (read with `skill_file('release', path)`): `reference.md`" in result
    assert "REF: 1. Tag it." in result
    assert "LIST: SKILL.md\nscripts/fill.py" in result
    assert result.count("REFUSED: skill_file:") == 2 and "not a skill file" not in result


async def test_an_untrusted_project_offers_only_the_personal_skills(
    tmp_path: Path, vis_home: Path
) -> None:
    project = _setup(tmp_path, vis_home)
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump([{"text": "done"}]))
    system = (await _requests(project, script))[0].system
    assert "- `release`:" in system
    assert "`pdf`" not in system and "`lint-fix`" not in system and "`deploy`" not in system


async def test_a_skill_whose_front_matter_nests_too_deeply_is_read_without_it(
    tmp_path: Path, vis_home: Path
) -> None:
    project = _setup(tmp_path, vis_home)
    deep = vis_home / "skills" / "deep"
    deep.mkdir()
    nested = "[" * 5000 + "]" * 5000  # the YAML parser recurses per level
    (deep / "SKILL.md").write_text(f"---\nname: {nested}\n---\n# Deep\n\nGo deep.\n")
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump([{"text": "done"}]))
    system = (await _requests(project, script))[0].system
    assert "- `deep`: Deep" in system  # its folder's name and its title, as without a header
    assert "- `release`:" in system
