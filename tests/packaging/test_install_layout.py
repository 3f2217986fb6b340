"""What an install puts in site-packages: ``extensions/`` ships as ``vis_extensions``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_extensions_install_as_vis_extensions(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    assert (lib / "vis_extensions" / "git" / "__init__.py").is_file()
    assert (lib / "vis_extensions" / "git" / "guides" / "history.md").is_file()
    assert (lib / "vis_extensions" / "todo" / "items.py").is_file()
    assert not (lib / "extensions").exists()  # no top-level name that clashes in site-packages
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "from vis_core.extension_host.discovery import bundled_dir; print(bundled_dir())",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(lib)},
        check=True,
        capture_output=True,
        text=True,
    )
    assert Path(found.stdout.strip()) == (lib / "vis_extensions").resolve()
