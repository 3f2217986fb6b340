"""`vis trust` says what trusting lets the project do, in its own words and on its own lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.cli import main


def test_trust_names_what_the_project_loads_and_a_jail_it_turns_off(
    workspace: Path, vis_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`vis trust` said only "its extensions and MCP servers will load" of a project whose
    vis.yml turned the jail off and set its environment (found by a tester): the person
    trusted a harmless-looking checkout and the model's next block ran unjailed."""
    (workspace / "vis.yml").write_text("environment:\n  FOO: bar\ntoggles:\n  jail: false\n")
    (workspace / ".env").write_text("X=1\n")
    (workspace / ".vis" / "extensions").mkdir(parents=True)
    (workspace / ".vis" / "extensions" / "tools.py").write_text("print(1)\n")
    (workspace / ".vis" / "extensions" / "a\n  MCP servers: none.py").write_text("")
    assert main(["trust", str(workspace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"Trusted {workspace.resolve()}:")
    assert "! jail = false: the model's blocks and shell commands run unjailed here" in lines[1]
    (extensions,) = [line for line in lines if "extensions (outside the jail)" in line]
    assert "tools.py" in extensions and "a\\n  MCP servers: none.py" in extensions
    assert not any(line.startswith("  MCP servers") for line in lines)  # no forged line
    assert "  environment and settings files: vis.yml, .env" in lines


def test_trusting_a_project_with_nothing_for_vis_says_so(
    workspace: Path, vis_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trust", str(workspace)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("it has no extensions, MCP servers or settings for Vis yet.")


async def test_an_untrusted_project_names_what_vis_skipped(workspace: Path) -> None:
    """`vis run` in an untrusted checkout said only "its extensions and MCP servers were
    skipped": no file named, nothing of its .env, environment, commands or skills (found by
    a tester; security.md: Vis names each file it skipped)."""
    from .support import open_host

    (workspace / ".vis" / "extensions").mkdir(parents=True)
    (workspace / ".vis" / "extensions" / "ev.py").write_text("print(1)\n")
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "hack.md").write_text("hack\n")
    (workspace / ".env").write_text("X=1\n")
    host = await open_host(workspace)
    try:
        notes = host.startup_notes()
    finally:
        await host.close()
    (skipped,) = [note for note in notes if "Vis skipped" in note]
    assert "extensions (outside the jail): ev.py" in skipped
    assert "environment and settings files: .env" in skipped
    assert "commands and skills: 1 file;" in skipped
    assert skipped.endswith(f"run `vis trust {workspace.resolve()}` to allow them")
