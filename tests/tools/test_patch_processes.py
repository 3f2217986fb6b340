"""Two Vis processes patching one file: every edit either side reports done is in the file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EDITS = 80
WRITER = """
import asyncio, sys
from pathlib import Path
from vis_core.tools import ToolContext
from vis_core.tools.patching import PatchError
from vis_core.tools.edit import patch_file
from vis_core.tools.files import cat_file

async def main(workspace, tag, count):
    ctx = ToolContext(Path(workspace), tag, Path(workspace).parent / ("out-" + tag))
    done = 0
    for i in range(count):
        header = cat_file(ctx, "shared.txt").split("\\n", 1)[0]
        version = int(header.rsplit("@", 1)[1])
        lines = (Path(workspace) / "shared.txt").read_text().count("\\n")
        try:
            await patch_file(ctx, "shared.txt", version, [
                {"start": 1, "end": 0, "text": f"{tag}-{i}\\n"}])
        except PatchError as exc:
            print("refused", i, exc, file=sys.stderr)
            continue
        print(f"{tag}-{i}", flush=True)
        done += 1
    await ctx.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def test_two_processes_lose_no_reported_edit(workspace: Path) -> None:
    (workspace / "shared.txt").write_text("end\n")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(workspace), tag, str(EDITS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    reported: list[str] = []
    for writer in writers:
        out, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, err
        reported += out.split()
    lines = (workspace / "shared.txt").read_text().splitlines()
    assert len(reported) >= EDITS  # most succeed; a refusal is reported, never silent
    missing = [edit for edit in reported if edit not in lines]
    assert missing == [], f"{len(missing)} of {len(reported)} reported edits were lost"
    assert lines[-1] == "end"
