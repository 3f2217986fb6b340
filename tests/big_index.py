"""A repository whose index names many files that are not on disk: what a block or a checkout
can make in seconds, to test the bounds of every listing Vis reads from Git."""

from __future__ import annotations

import subprocess
from pathlib import Path


def indexed(repo: Path, paths: int, length: int = 8) -> None:
    """A repository whose index names ``paths`` files of about ``length``-byte paths, all of
    one empty blob and none on disk: what a block can make in seconds, at little disk cost."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"", capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    folders = "".join(["d" * 200 + "/"] * (length // 201))
    lines = "".join(f"100644 {blob}\t{folders}{n:08d}\n" for n in range(paths))
    subprocess.run(["git", "update-index", "--index-info"], cwd=repo, input=lines.encode())
