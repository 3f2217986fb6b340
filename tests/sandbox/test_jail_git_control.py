"""What the person's own git (and other agents) run from the workspace stays out of a jailed
block's reach: the ``.git`` of every repository in it (a nested clone's, a ``.git`` file's),
the hooks folder and config files git's configuration names there (husky's
``core.hooksPath``, an ``include.path``), and other agents' settings; one that cannot be kept
read-only before it exists is told once a block makes it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, git, make_repo, run_blocks

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

WRITE = """
import os
for path in {paths!r}:
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "a") as file:
            file.write({text!r})
        os.chmod(path, 0o755)
        print("wrote", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
"""


def write_block(paths: list[str], text: str) -> str:
    return WRITE.format(paths=paths, text=text)


def notices(events: list[object]) -> list[str]:
    return [str(getattr(e, "text", "")) for e in events if type(e).__name__ == "Notification"]


async def test_the_git_of_every_repository_in_the_workspace_is_read_only(
    tmp_path: Path, vis_home: Path
) -> None:
    """vendor/lib, a clone inside the workspace, and vendor/other, whose ``.git`` file names a
    git folder elsewhere in the workspace: a block wrote vendor/lib's ``core.fsmonitor`` and
    a hook, which the person's ``git status`` ran on the host. Both ``.git`` (and the git
    folder the file names) are read-only now, and that ``git status`` runs nothing."""
    workspace = tmp_path / "ws"
    (workspace / "vendor").mkdir(parents=True)
    (workspace / "store").mkdir()
    git(workspace, "init", "-q")
    (workspace / "vendor" / "lib").mkdir()
    lib = make_repo(workspace / "vendor" / "lib")
    other = workspace / "vendor" / "other"
    git(workspace, "init", "-q", f"--separate-git-dir={workspace / 'store' / 'other'}", str(other))
    (vis_home / "config.toml").write_text("jail = true\n")
    pwned = tmp_path / "pwned"
    monitor = f'[core]\n\tfsmonitor = "touch {pwned}; false"\n'
    paths = [
        "vendor/lib/.git/config",
        "vendor/lib/.git/hooks/post-checkout",
        "vendor/other/.git",
        "store/other/config",
    ]
    (block,) = (await run_blocks(workspace, tmp_path, write_block(paths, monitor))).blocks
    assert block.error is None, block.error
    for path in paths:
        assert f"refused {path} Read-only file system" in block.stdout, block.stdout
    subprocess.run(["git", "status"], cwd=lib, check=True, capture_output=True)
    subprocess.run(["git", "status"], cwd=other, check=True, capture_output=True)
    assert not pwned.exists()


async def test_hooks_and_config_files_git_takes_from_the_workspace_are_read_only(
    tmp_path: Path, vis_home: Path
) -> None:
    """husky's ``core.hooksPath = .husky/_`` (its callers there run ``.husky/<hook>``) and an
    ``include.path`` of the workspace: a block rewrote ``.husky/pre-commit``, made
    ``.husky/post-checkout`` and set ``core.fsmonitor`` in the included file, and the
    person's next commit ran them. They are read-only now, also to the host-side ``patch``
    tool; an included file that does not exist yet is told once a block makes it."""
    (tmp_path / "ws").mkdir()
    workspace = make_repo(tmp_path / "ws")
    (workspace / ".husky" / "_").mkdir(parents=True)
    (workspace / ".husky" / "pre-commit").write_text("npm test\n")
    (workspace / ".gitconfig.local").write_text("[user]\n\tname = Ada\n")
    git(workspace, "config", "core.hooksPath", ".husky/_")
    git(workspace, "config", "include.path", "../.gitconfig.local")
    git(workspace, "config", "includeIf.onbranch:main.path", "../later.gitconfig")
    (vis_home / "config.toml").write_text("jail = true\n")
    paths = [".husky/pre-commit", ".husky/post-checkout", ".husky/_/h", ".gitconfig.local"]
    patch = (
        "try:\n"
        "    await patch('.husky/pre-commit', 0, 'id\\n')\n"
        "except Exception as exc:\n"
        "    print('patch refused:', exc)\n"
    )
    outcome = await run_blocks(
        workspace,
        tmp_path,
        write_block(paths, "[core]\n\tfsmonitor = touch /tmp/x\n"),
        patch,
        write_block(["later.gitconfig"], "[core]\n\tfsmonitor = touch /tmp/x\n"),
    )
    first, second, third = outcome.blocks
    for path in paths:
        assert f"refused {path} Read-only file system" in first.stdout, first.stdout
    assert "patch refused:" in second.stdout and "read-only" in second.stdout, second.stdout
    assert (workspace / ".husky" / "pre-commit").read_text() == "npm test\n"
    assert "wrote later.gitconfig" in third.stdout, third.stdout
    told = [n for n in notices(outcome.events) if "later.gitconfig appeared" in n]
    assert len(told) == 1 and "include.path or core.hooksPath" in told[0], notices(outcome.events)


async def test_other_agents_settings_are_read_only_or_told_when_made(
    tmp_path: Path, vis_home: Path
) -> None:
    """A block made ``.claude/settings.json`` (a SessionStart hook Claude Code runs) in a
    workspace without ``.claude/``, unseen. Existing ``.cursor/`` and ``.mcp.json`` are
    read-only; the ``.claude/`` a block makes is told, and no placeholder is left where
    there was none."""
    workspace = tmp_path / "ws"
    (workspace / ".cursor").mkdir(parents=True)
    (workspace / ".mcp.json").write_text("{}\n")
    (vis_home / "config.toml").write_text("jail = true\n")
    hook = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}'
    paths = [".cursor/mcp.json", ".mcp.json", ".claude/settings.json"]
    outcome = await run_blocks(workspace, tmp_path, write_block(paths, hook))
    (block,) = outcome.blocks
    assert "refused .cursor/mcp.json Read-only file system" in block.stdout, block.stdout
    assert "refused .mcp.json Read-only file system" in block.stdout, block.stdout
    assert "wrote .claude/settings.json" in block.stdout, block.stdout
    told = [n for n in notices(outcome.events) if "appeared during this session" in n]
    assert len(told) == 1 and f"{workspace.resolve() / '.claude'} appeared" in told[0], told
    assert "Claude Code" in told[0]
    assert not (workspace / ".gemini").exists() and not (workspace / ".codex").exists()


async def test_other_agents_settings_in_subfolders_are_read_only_or_told_when_made(
    tmp_path: Path, vis_home: Path
) -> None:
    """Only the workspace's own ``.claude/`` and ``.mcp.json`` were kept: a block wrote a
    hook into ``pkg/app/.claude/settings.json`` and a server into ``pkg/lib/.mcp.json``,
    which Claude Code runs when the person starts it in those folders, and made
    ``pkg/web/deep/.codex/config.toml`` (or one in a subfolder of the clone ``vendor/lib``)
    untold. At any depth, those that exist are read-only now, and so stay (a folder on the
    way cannot be renamed), and each new one is told once after the block."""
    workspace = tmp_path / "ws"
    (workspace / "pkg" / "app" / ".claude").mkdir(parents=True)
    (workspace / "pkg" / "lib").mkdir()
    (workspace / "pkg" / "lib" / ".mcp.json").write_text("{}\n")
    (workspace / "vendor" / "lib" / "sub").mkdir(parents=True)
    make_repo(workspace / "vendor" / "lib")
    (vis_home / "config.toml").write_text("jail = true\n")
    hook = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}'
    paths = [
        "pkg/app/.claude/settings.json",
        "pkg/lib/.mcp.json",
        "pkg/web/deep/.codex/config.toml",
        "pkg/web/.cursor/mcp.json",
        "vendor/lib/sub/.gemini/settings.json",
    ]
    rename = (
        "import os\n"
        "for old, new in [('pkg/app', 'pkg/app2'), ('pkg', 'pkg2')]:\n"
        "    try:\n"
        "        os.rename(old, new)\n"
        "        print('renamed', old)\n"
        "    except OSError as exc:\n"
        "        print('refused', old, exc.strerror)\n"
    )
    outcome = await run_blocks(workspace, tmp_path, write_block(paths, hook) + rename)
    (block,) = outcome.blocks
    for path in paths[:2]:
        assert f"refused {path} Read-only file system" in block.stdout, block.stdout
    for path in paths[2:]:
        assert f"wrote {path}" in block.stdout, block.stdout
    assert "renamed" not in block.stdout, block.stdout
    told = [n for n in notices(outcome.events) if "appeared during this session" in n]
    root = workspace.resolve()
    for made in ("pkg/web/deep/.codex", "pkg/web/.cursor", "vendor/lib/sub/.gemini"):
        said = [n for n in told if n.startswith(f"{root / made} appeared")]
        assert len(said) == 1 and "Codex" in said[0], told
    assert len(told) == 3, told


async def test_a_protected_name_that_is_a_link_is_told_when_a_block_replaces_it(
    tmp_path: Path, vis_home: Path
) -> None:
    """The jail keeps a link's target read-only, never the link: a block removed the links
    ``.husky`` (core.hooksPath), ``gitconfig.local`` (include.path) and ``.claude`` and put
    its own folder and files there, and the person's next commit ran them, untold."""
    (tmp_path / "ws").mkdir()
    workspace = make_repo(tmp_path / "ws")
    (workspace / "tools" / "hooks").mkdir(parents=True)
    (workspace / "shared").mkdir()
    (workspace / "shared" / "inc.gitconfig").write_text("[user]\n\tname = Ada\n")
    (workspace / ".husky").symlink_to("tools/hooks")
    (workspace / "gitconfig.local").symlink_to("shared/inc.gitconfig")
    (workspace / ".claude").symlink_to("shared")
    git(workspace, "config", "core.hooksPath", ".husky")
    git(workspace, "config", "include.path", "../gitconfig.local")
    (vis_home / "config.toml").write_text("jail = true\n")
    swap = (
        "import os\n"
        "for name in ('.husky', '.claude', 'gitconfig.local'):\n"
        "    os.unlink(name)\n"
        "os.mkdir('.husky'); os.mkdir('.claude')\n"
        "open('gitconfig.local', 'w').write('[core]\\n\\tfsmonitor = id\\n')\n"
        "print('swapped')\n"
    )
    outcome = await run_blocks(workspace, tmp_path, swap)
    assert "swapped" in outcome.blocks[0].stdout, outcome.blocks[0]
    told = [n for n in notices(outcome.events) if "was replaced during this session" in n]
    for name in (".husky", ".claude", "gitconfig.local"):
        assert any(n.startswith(f"{workspace.resolve() / name}, a link to ") for n in told), told
