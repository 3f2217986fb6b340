"""`vis run "/hello"` (a project extension's command) in a project Vis does not load: one
note says why, true to whether the person never trusted it or changed it since, and the
refusal of /hello names the extension Vis skipped (of /review, the command file)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import script, vis

from vis_core.settings.trust_notice import skipped_command

HELLO = """import blockether.vis.extension as vis


def hello(args: str = "") -> str:
    return "hello there"


vis.register_extension(vis.Extension(
    name="hello", description="Says hello.",
    slash_commands=[vis.SlashCommand("hello", hello, doc="Say hello.")],
))
"""


@pytest.mark.parametrize("trusted_once", [True, False])
def test_a_project_not_loaded_gets_one_true_note(
    workspace: Path, vis_home: Path, tmp_path: Path, trusted_once: bool
) -> None:
    entry = workspace / ".vis" / "extensions" / "hello.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(HELLO, encoding="utf-8")
    (workspace / "vis.yml").write_text("toggles:\n  jail: false\n", encoding="utf-8")
    s = script(tmp_path, [{"text": "ok"}])
    run = ("run", "--provider", "scripted", "--script", str(s), "/hello")
    if trusted_once:
        assert vis("trust", cwd=workspace, env_home=vis_home).returncode == 0
        loaded = vis(*run, cwd=workspace, env_home=vis_home)
        assert loaded.returncode == 0 and "hello there" in loaded.stdout, loaded.stderr
        with entry.open("a", encoding="utf-8") as file:
            file.write("# an edit\n")
    ran = vis(*run, cwd=workspace, env_home=vis_home)
    assert ran.returncode == 2, ran.stderr
    (note,) = [
        line for line in ran.stderr.splitlines() if line.startswith("vis: ") and "trust" in line
    ]
    why = "changed since you trusted it" if trusted_once else "is not trusted"
    assert why in note and f"`vis trust {workspace}`" in note, note
    assert "extensions (outside the jail): hello.py" in note and "vis.yml (sets jail)" in note
    # the refusal of /hello names the extension Vis skipped, why, and what loads it
    refused = ran.stderr.splitlines()[-1]
    assert refused.startswith("vis run: /hello is not a command; "), ran.stderr
    assert skipped_command("hello", workspace, ["hello.py"], lapsed=trusted_once) in refused


def test_the_notes_vis_trust_is_a_command_a_shell_runs(vis_home: Path, tmp_path: Path) -> None:
    """A project folder with a space, a quote and ``$`` in its name: the note's `vis trust`
    command, pasted into a shell, trusts that folder, and the command then runs."""
    workspace = tmp_path / "it's my $project"
    entry = workspace / ".vis" / "extensions" / "hello.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(HELLO, encoding="utf-8")
    run = ("run", "--provider", "scripted", "--script", str(script(tmp_path, [])), "/hello")
    skipped = vis(*run, cwd=workspace, env_home=vis_home)
    command = re.search(r"run `(vis trust [^`]*)` to allow them", skipped.stderr)
    assert command is not None, skipped.stderr
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    pasted = subprocess.run(  # `vis` as the person's shell finds it
        ["bash", "-c", f'vis() {{ "{sys.executable}" -m vis_core.cli "$@"; }}\n{command[1]}'],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pasted.returncode == 0 and f"Trusted {workspace}" in pasted.stdout, pasted.stderr
    loaded = vis(*run, cwd=workspace, env_home=vis_home)
    assert loaded.returncode == 0 and "hello there" in loaded.stdout, loaded.stderr


@pytest.mark.parametrize("trusted_once", [True, False])
def test_a_skipped_command_file_is_named(
    workspace: Path, vis_home: Path, tmp_path: Path, trusted_once: bool
) -> None:
    """`vis run "/review"` of a project's `.claude/commands/review.md` Vis skipped said only
    "/review is not a command"; now it names the file, why, and what loads it."""
    command = workspace / ".claude" / "commands" / "review.md"
    command.parent.mkdir(parents=True)
    command.write_text("Review the change.\n", encoding="utf-8")
    if trusted_once:
        assert vis("trust", cwd=workspace, env_home=vis_home).returncode == 0
        command.write_text("Review the change, twice.\n", encoding="utf-8")
    s = script(tmp_path, [])
    ran = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "/review",
        cwd=workspace,
        env_home=vis_home,
    )
    assert ran.returncode == 2, ran.stderr
    refused = ran.stderr.splitlines()[-1]
    said = skipped_command(
        "review", workspace, [], lapsed=trusted_once, files=[".claude/commands/review.md"]
    )
    assert refused.startswith("vis run: /review is not a command; ") and said in refused, refused
    assert said.startswith("Vis skipped the project's command file .claude/commands/review.md: ")
