"""``vis.file_mutation_queue`` and ``vis.fs.write``: one per-file queue with ``patch``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import vis_core.extension as vis
from vis_core.extension.mutation import FileMutationQueue

from .harness import code_turn, install_extension, open_host, run_turn, write_script

NOTES = '''
import time

import vis_core.extension as vis


def append_note(path: str) -> str:
    """Append a line to ``path`` (a slow read-modify-write)."""
    with vis.file_mutation_queue(path) as real:
        text = vis.fs.read_text(path)
        time.sleep(0.5)  # a patch of the same file arrives meanwhile
        vis.fs.write(path, text + "note\\n")  # the queue is held already: no wait on itself
    return real


vis.register_extension(vis.Extension(
    name="notes", alias="notes", description="Appends notes.",
    symbols=[vis.Symbol(append_note, tag="mutation", activity=vis.Activity(label="Add note"))],
))
'''

BLOCK = """
import asyncio
await cat("a.txt")
real, patched = await asyncio.gather(
    append_note("a.txt"),
    patch("a.txt", 1, [{"start": 1, "end": 1, "text": "ONE"}]),
)
print(real)
"""


async def test_a_gathered_extension_write_and_patch_keep_both_changes(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    target = workspace / "a.txt"
    target.write_text("one\ntwo\n")
    target.chmod(0o640)
    install_extension(vis_home, "notes", NOTES)
    write_script(script_path, code_turn(BLOCK))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    block = outcome.blocks[0]
    assert block.error is None, block.error
    assert block.stdout.strip() == str(target.resolve())
    assert target.read_text() == "ONE\ntwo\nnote\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the write kept the file's mode
    assert not [p for p in workspace.iterdir() if p.name.endswith(".vis-tmp")]


def test_the_queue_is_keyed_by_real_path_and_works_with_async_with(tmp_path: Path) -> None:
    target = tmp_path / "data.txt"
    target.write_text("x")
    link = tmp_path / "alias.txt"
    link.symlink_to(target)
    assert FileMutationQueue(link).key == FileMutationQueue(target).key == str(target.resolve())
    order: list[str] = []

    async def hold(name: str, path: Path) -> None:
        async with vis.file_mutation_queue(path):
            order.append(f"{name} in")
            await asyncio.sleep(0.2)
            vis.fs.write(path, name)  # re-entering the held queue does not wait
            order.append(f"{name} out")

    async def both() -> None:
        await asyncio.gather(hold("first", target), hold("second", link))

    asyncio.run(both())
    # one holds the queue at a time, whichever took it first (their takes race in threads)
    first, second = order[0].split()[0], order[2].split()[0]
    assert {first, second} == {"first", "second"}
    assert order == [f"{first} in", f"{first} out", f"{second} in", f"{second} out"]
    assert target.read_text() == second
    with vis.file_mutation_queue(target) as real, vis.file_mutation_queue(target):
        assert real == str(target.resolve())


HOLDER = """
import sys
import vis_core.extension as vis

path = sys.argv[1]
with vis.file_mutation_queue(path):
    text = vis.fs.read_text(path)
    print("held", flush=True)
    sys.stdin.readline()  # the other process's patch arrives meanwhile
    vis.fs.write(path, text + "note\\n")
"""


def _waiting_on_folder(folder: Path) -> bool:
    """Whether a process waits for an flock on ``folder`` (a ``->`` row of /proc/locks)."""
    inode = f":{folder.stat().st_ino} "
    rows = Path("/proc/locks").read_text().splitlines()
    return any("->" in row and "FLOCK" in row and inode in row for row in rows)


async def test_an_extension_write_in_another_process_and_a_patch_keep_both_changes(
    workspace: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from vis_core.tools import ToolContext
    from vis_core.tools.edit import patch_file
    from vis_core.tools.files import cat_file

    target = workspace / "a.txt"
    target.write_text("one\ntwo\n")
    ctx = ToolContext(workspace, "s", tmp_path / "out")
    version = int(cat_file(ctx, "a.txt").split("\n", 1)[0].rsplit("@", 1)[1])
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held", holder.stderr
        edits = [{"start": 1, "end": 1, "text": "ONE"}]
        patching = asyncio.ensure_future(patch_file(ctx, "a.txt", version, edits))
        for _ in range(2_000):  # the patch waits for the extension's lock (no time asserted)
            if _waiting_on_folder(workspace) or patching.done():
                break
            await asyncio.sleep(0.005)
        assert not patching.done(), "patch did not wait for the other process's queue"
        holder.stdin.write("go\n")
        holder.stdin.flush()
        await patching
        assert holder.wait(30) == 0, holder.stderr.read() if holder.stderr else ""
    finally:
        holder.kill()
        holder.wait()
        await ctx.close()
    assert target.read_text() == "ONE\ntwo\nnote\n"
