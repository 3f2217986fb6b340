"""The look for the workspace's git files (every repository, the hooks folders and config
files their configuration names) is taken when first needed, before the first block: not at
the start, where a checkout of thousands of folders made every start wait for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from vis_core.events import BlockFinished, Event, Notification
from vis_core.host import Host, HostOptions

DEEP = "folder-only-a-walk-opens"  # a folder a few levels down, opened by name by a look

WATCHED = """
import asyncio, sys
from pathlib import Path

opened = []

def looking(event, args):
    # what the look for git repositories (nested_gits.py) opens of the deep folder
    if event != "open" or not args or not str(args[0]).endswith({deep!r}):
        return
    frame = sys._getframe()
    while frame is not None and not frame.f_code.co_filename.endswith("nested_gits.py"):
        frame = frame.f_back
    if frame is not None:
        opened.append(args)

sys.addaudithook(looking)

from vis_core.host import Host, HostOptions

async def main():
    options = HostOptions(workspace=Path({workspace!r}), provider="scripted",
                          script=Path({script!r}))
    host = await Host.open(options)
    try:
        print("opened at the start:", len(opened))
        session = await host.new_session()
        await session.submit("hello")
        print("opened by a turn without a block:", len(opened))
        await session.submit("go")
        print("opened by the first block:", len(opened))
    finally:
        await host.close()

asyncio.run(main())
"""


def _script(path: Path, *blocks: str, answer_first: bool = False) -> Path:
    steps = [*({"code": b} for b in blocks), {"text": "Done."}]
    path.write_text(yaml.safe_dump([{"text": "Hello."}, *steps] if answer_first else steps))
    return path


def _repo(root: Path) -> Path:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_the_start_walks_no_folder_of_the_workspace_and_the_first_block_does(
    tmp_path: Path, vis_home: Path
) -> None:
    """A Vis started in a checkout used to walk up to 2,000 of its folders before it was
    ready (with the jail off too), and again after a turn that ran no block. Now the looks
    open none of them until a block comes."""
    workspace = _repo(tmp_path / "ws")
    (workspace / "a" / "b" / DEEP).mkdir(parents=True)
    script = _script(tmp_path / "script.yaml", "print('ran')", answer_first=True)
    code = WATCHED.format(deep=DEEP, workspace=str(workspace), script=str(script))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert "opened at the start: 0\n" in done.stdout, (done.stdout, done.stderr)
    assert "opened by a turn without a block: 0\n" in done.stdout, done.stdout
    assert "opened by the first block: 0\n" not in done.stdout, (done.stdout, done.stderr)


async def test_a_hooks_file_a_block_makes_is_told_with_the_jail_off(
    tmp_path: Path, vis_home: Path
) -> None:
    """With the jail off the look is still taken before the first block runs: an included
    config file that block makes is told, as one a later block makes."""
    workspace = _repo(tmp_path / "ws")
    git = ["git", "-C", str(workspace), "config"]
    subprocess.run([*git, "include.path", "../first.gitconfig"], check=True)
    subprocess.run([*git, "core.hooksPath", "later-hooks"], check=True)
    (vis_home / "config.toml").write_text("jail = false\n")
    script = _script(
        tmp_path / "script.yaml",
        "open('first.gitconfig', 'w').write('[core]\\n\\tfsmonitor = id\\n'); print('made')",
        "import os; os.mkdir('later-hooks'); print('made')",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("go")
    finally:
        await host.close()
    assert [e.stdout for e in events if isinstance(e, BlockFinished)] == ["made\n", "made\n"]
    told = [e.text for e in events if isinstance(e, Notification) and "appeared" in e.text]
    root = workspace.resolve()
    for name in ("first.gitconfig", "later-hooks"):
        assert sum(f"{root / name} appeared during this session" in t for t in told) == 1, told
