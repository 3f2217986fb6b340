"""Compile Vis's own modules once before a startup bench, as an installed Vis would have them.

An editable install never writes bytecode for its sources, and ``PYTHONDONTWRITEBYTECODE``
keeps imports from doing it, while the anchors (Textual) load theirs from cache: without this
every timed run of Vis would also pay for compiling ~160 modules. Run it alone
(``.venv/bin/python bench/precompile.py``) before measuring by hand (callgrind, farm-bench).
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def compile_vis() -> None:
    for package in ("vis_core", "vis_tui", "extensions"):
        compileall.compile_dir(ROOT / package, quiet=1)


if __name__ == "__main__":
    compile_vis()
