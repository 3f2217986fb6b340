"""A write of Vis's cut short: its process dies after the temporary file is written, before
the rename, and leaves the file and its journal entry behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CUT_SHORT = """
import os, sys
from pathlib import Path
from vis_core.tools.beneath import Beneath

os.replace = lambda *args, **kwargs: os._exit(9)  # the process dies before the rename
Beneath(Path(sys.argv[1])).write_atomic(sys.argv[2], b"half written")
"""


def cut_short(root: Path, relative: str) -> Path:
    """The temporary file a write of ``root/relative`` left (a real write by Vis's code in a
    process of its own, with ``$VIS_HOME``'s journal)."""
    done = subprocess.run([sys.executable, "-c", CUT_SHORT, str(root), relative], check=False)
    assert done.returncode == 9
    target = root / relative
    (temp,) = target.parent.glob(f".{target.name}.*.vis-tmp")
    return temp
