"""A checkout full of named pipes, links to devices and sockets where Vis reads its files
(instructions, settings, skills, commands, mcp.json, .env, extensions) opens and runs a turn:
nothing Vis reads on the host waits on one or reads one without end. Trusted, the settings it
cannot read stop the turn by name (fail closed)."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from pathlib import Path

import pytest

from vis_core.paths import TrustStore, VisPaths

from .hostile import run_blocks

# Where a checkout puts something that is not a regular file.
PIPES = (
    "AGENTS.md",
    "vis.yml",
    ".env",
    ".vis/settings.toml",
    ".vis/mcp.json",
    ".vis/extensions/ext.py",
    ".agents/skills/pipe/SKILL.md",
    ".claude/commands/pipe.md",
    "sub/.gitignore",
)
DEVICES = {
    "CLAUDE.md": "/dev/zero",
    "GEMINI.md": "/dev/stdin",
    ".env.local": "/dev/zero",
    ".claude/skills/zero/SKILL.md": "/dev/zero",
    ".claude/commands/zero.md": "/dev/zero",
    ".agents/skills/stdin/SKILL.md": "/dev/stdin",
}
LIST = """
names = await ls(".")
print("listed", "notes.txt" in str(names))
"""


def _hostile_checkout(root: Path) -> list[socket.socket]:
    for name in PIPES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / name)
    for name, device in DEVICES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(device, root / name)
    (root / "notes.txt").write_text("one\n")
    listening = []
    for name in (".vis/extensions/sock.py", ".claude/commands/sock.md"):
        server = socket.socket(socket.AF_UNIX)
        # bound at a short path, then moved: a socket's path holds at most 107 bytes
        short = Path(tempfile.mkdtemp(prefix="vis-sock-")) / "s"
        server.bind(str(short))
        os.rename(short, root / name)
        short.parent.rmdir()
        listening.append(server)
    return listening


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
async def test_a_checkout_of_special_files_runs_a_turn(
    workspace: Path, tmp_path: Path, trusted: bool
) -> None:
    sockets = _hostile_checkout(workspace)
    try:
        if trusted:
            TrustStore(VisPaths.from_env()).trust(workspace)
        outcome = await asyncio.wait_for(run_blocks(workspace, tmp_path, LIST), 120)
    finally:
        for server in sockets:
            server.close()
    if trusted:  # settings Vis cannot read may decide what runs: the turn says which, and stops
        error = outcome.ended.error or ""
        assert "vis.yml: not a regular file" in error, error
        assert "settings.toml: not a regular file" in error
        return
    (block,) = outcome.blocks
    assert block.error is None, block.error
    assert "listed True" in block.stdout
