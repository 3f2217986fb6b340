"""Extension environment: ``environment:`` block, ``.env``, ``.env.local``, starting env."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vis_core.extension_host.environment import (
    ProjectEnvironmentError,
    extension_environment,
    project_environment,
    read_dotenv,
    read_environment_block,
)
from vis_core.paths import TrustStore, VisPaths

READER = """
import os
import vis_core.extension as vis

NAMES = ["FROM_BLOCK", "IN_BOTH", "FROM_LOCAL", "FROM_DOTENV", "FROM_START", "NOWHERE"]

vis.register_extension(vis.Extension(
    name="reader",
    description="Reads its environment.",
    env=NAMES,
    slash_commands=[vis.SlashCommand(
        "env", lambda ctx: vis.ok("env", data={
            name: os.environ.get(name) for name in NAMES + ["UNDECLARED", "PORT"]
        }),
    )],
))
"""


def project(workspace: Path) -> None:
    (workspace / "vis.yml").write_text(
        "environment:\n  FROM_BLOCK: block\n  PORT: 8080\n  DEBUG: true\n", encoding="utf-8"
    )
    (workspace / ".env").write_text(
        "# defaults\nFROM_BLOCK=dotenv\nIN_BOTH=dotenv\nexport FROM_DOTENV='dotenv value'\n"
        "UNDECLARED=secret\n",
        encoding="utf-8",
    )
    (workspace / ".env.local").write_text(
        'IN_BOTH=local\nFROM_LOCAL="local"  # mine\n', encoding="utf-8"
    )


@pytest.fixture
def starting_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FROM_START", "start")
    monkeypatch.setenv("FROM_LOCAL", "start")
    monkeypatch.setenv("IN_BOTH", "start")
    for name in ("FROM_BLOCK", "FROM_DOTENV", "NOWHERE", "UNDECLARED", "PORT"):
        monkeypatch.delenv(name, raising=False)


async def test_declared_names_resolve_in_order(extension, scripted, workspace, starting_env):
    project(workspace)
    TrustStore(VisPaths.from_env()).trust(workspace)
    extension("reader", READER)
    run = await scripted([])
    result = await run.host.commands.run(await run.session(), "/env")
    assert result.data == {
        "FROM_BLOCK": "block",  # the project's environment: block comes first
        "IN_BOTH": "dotenv",  # then .env, then .env.local: the first that defines it wins
        "FROM_LOCAL": "local",  # .env.local over the starting environment
        "FROM_DOTENV": "dotenv value",
        "FROM_START": "start",
        "NOWHERE": None,  # declared, resolved nowhere: absent
        "UNDECLARED": "secret",  # defined by the project itself: needs no declaration
        "PORT": "8080",  # the same for the environment: block
    }


async def test_untrusted_project_files_are_not_read(extension, scripted, workspace, starting_env):
    project(workspace)
    extension("reader", READER)
    run = await scripted([])
    result = await run.host.commands.run(await run.session(), "/env")
    assert result.data["FROM_BLOCK"] is None and result.data["FROM_LOCAL"] == "start"
    assert result.data["UNDECLARED"] is None and result.data["PORT"] is None


def test_dotenv_and_block_parsing(tmp_path: Path):
    env = tmp_path / ".env"
    env.write_text(
        "A=1\nexport B = two words \nC=\"line\\nbreak\"\nD='raw\\n'\nE=x # comment\n"
        "not a line\n#F=commented\nG\nH=${HOME}/x\n",
        encoding="utf-8",
    )
    assert read_dotenv(env.read_bytes()) == {
        "A": "1",
        "B": "two words",
        "C": "line\nbreak",
        "D": "raw\\n",
        "E": "x",
        "H": "${HOME}/x",  # never expanded from the environment that started Vis
    }
    assert read_dotenv(None) == {}  # no such file
    (tmp_path / "vis.yml").write_text("environment:\n  PORT: 8080\n  FLAG: true\n  EMPTY:\n")
    block = (tmp_path / "vis.yml").read_bytes()
    assert read_environment_block(tmp_path, block) == {"PORT": "8080", "FLAG": "true"}
    (tmp_path / "vis.yml").write_text("environment: [A, B]\n")
    with pytest.raises(ProjectEnvironmentError, match="must map names to values"):
        read_environment_block(tmp_path, (tmp_path / "vis.yml").read_bytes())
    values = extension_environment(tmp_path, trusted=True, base={"A": "base", "Z": "z"})
    assert values["A"] == "1" and values["Z"] == "z"  # the bad block is logged and skipped
    assert values.project_names == {"A", "B", "C", "D", "E", "H"}
    (tmp_path / ".env.local").write_text("A=local\nL=local\n")
    (tmp_path / "vis.yml").write_text("environment:\n  C: block\n")
    assert project_environment(tmp_path) == {
        "C": "block",
        "A": "1",
        "B": "two words",
        "D": "raw\\n",
        "E": "x",
        "H": "${HOME}/x",
        "L": "local",
    }
    assert extension_environment(tmp_path, trusted=False, base={"A": "base"}) == {"A": "base"}
    assert "A" not in os.environ or os.environ["A"] != "1"
