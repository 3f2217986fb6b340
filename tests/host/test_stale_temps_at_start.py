"""A start removes the temporary files of writes cut short that Vis named in its journal, and
walks no folder of the workspace for them: in a home folder or a monorepo the walk took
seconds of CPU at every start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from cut_short import cut_short

DEEP = "folder-only-a-walk-opens"  # a folder a few levels down, opened by name by a walk

STARTED = """
import asyncio, sys, threading
from pathlib import Path

opened = []

def looking(event, args):
    if event in ("open", "os.scandir", "os.listdir") and args and str(args[0]).endswith({deep!r}):
        opened.append(args)

sys.addaudithook(looking)

from vis_core.host import Host, HostOptions

async def main():
    options = HostOptions(workspace=Path({workspace!r}), provider="scripted",
                          script=Path({script!r}))
    host = await Host.open(options)
    try:
        for thread in threading.enumerate():  # the removal runs beside the start
            if thread.name == "vis-stale-temps":
                thread.join()
        print("opened:", len(opened))
    finally:
        await host.close()

asyncio.run(main())
"""


def test_the_start_removes_the_named_temporary_files_and_walks_no_folder(
    tmp_path: Path, vis_home: Path
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "a" / "b" / DEEP).mkdir(parents=True)
    (workspace / "sub").mkdir()
    left = cut_short(workspace, "sub/notes.py")
    theirs = workspace / "sub" / ".other.py.k3j2.vis-tmp"  # Vis's pattern, not Vis's file
    theirs.write_text("someone else's")
    old = 1_000_000_000
    for path in (left, theirs, *(vis_home / "temps").iterdir()):
        os.utime(path, (old, old))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "Hello."}]))
    code = STARTED.format(deep=DEEP, workspace=str(workspace), script=str(script))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout == "opened: 0\n", (done.stdout, done.stderr)
    assert not left.exists() and theirs.exists()
