"""grep in a checkout whose .gitignore (or .rgignore) is a named pipe stops at once and names it:
ripgrep and git would wait on the pipe for ever; a turn whose block made one goes on."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from vis_core.tools import ToolContext
from vis_core.tools.search import search


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (rg) is not installed")
@pytest.mark.parametrize("name", ["sub/.gitignore", "sub/.rgignore", ".gitignore"])
@pytest.mark.parametrize("repository", [False, True], ids=["plain", "git"])
async def test_ripgrep_waiting_on_a_pipe_is_stopped_and_the_pipe_named(
    workspace: Path, tmp_path: Path, name: str, repository: bool
) -> None:
    if repository:
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.py").write_text("needle = 1\n")
    pipe = workspace / name
    os.mkfifo(pipe)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    with pytest.raises(RuntimeError, match="named pipe") as failed:
        await search(ctx, "needle", engine="rg")
    assert str(pipe) in str(failed.value)
    pipe.unlink()
    assert "sub/a.py @1" in await search(ctx, "needle", engine="rg")


async def test_the_python_search_names_the_pipe_git_waited_on(
    workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.py").write_text("needle = 1\n")
    pipe = workspace / "sub" / ".gitignore"
    pipe.parent.mkdir()
    os.mkfifo(pipe)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    with pytest.raises(RuntimeError, match="named pipe") as failed:
        await search(ctx, "needle", engine="python")
    assert str(pipe) in str(failed.value)


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (rg) is not installed")
async def test_ripgrep_reading_a_huge_sparse_ignore_file_is_stopped(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("needle = 1\n")
    rules = workspace / ".rgignore"
    with open(rules, "wb") as file:
        file.truncate(8 << 30)
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    with pytest.raises(RuntimeError, match="file of rules") as failed:
        await search(ctx, "needle", engine="rg")
    assert str(rules) in str(failed.value)


async def test_a_block_that_makes_a_pipe_gitignore_does_not_end_its_turn(
    workspace: Path, tmp_path: Path
) -> None:
    """A block that made a named pipe for a ``.gitignore``: git, listing what the block
    changed, was stopped (rightly), and its RuntimeError ended the turn (a traceback in `vis
    run`). The listing fails as a read of the files does, the log says why, and the turn
    goes on: the next block removes the pipe and its row lists the files again."""
    from cli_support import script

    from vis_core.events import BlockFinished, TurnEnded
    from vis_core.host import Host, HostOptions

    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    steps = [
        {"code": "import os\nos.mkdir('sub')\nos.mkfifo('sub/.gitignore')"},
        {"code": "import os\nos.remove('sub/.gitignore')\nopen('a.txt', 'w').write('a')"},
        {"text": "Done."},
    ]
    options = HostOptions(workspace=workspace, provider="scripted", script=script(tmp_path, steps))
    host = await Host.open(options)
    events: list[object] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("work")
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert [b.error for b in blocks] == [None, None]
    assert "a.txt" in [c.path for c in blocks[1].files]
    assert [e.status.value for e in events if isinstance(e, TurnEnded)] == ["completed"]
