"""Fixtures for loader tests: build extension trees from the fixture entry files."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = '''"""A syntax error on line 5."""

import vis_core.extension as vis

def broken(:
    pass

vis.register_extension(vis.Extension(name="broken", description="Never loads."))
'''


def install(folder: Path, *names: str) -> Path:
    """Copy fixture entry files (``name.py`` or the ``name/`` folder) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name == "broken":
            (folder / "broken.py").write_text(BROKEN)
            continue
        source = FIXTURES / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(FIXTURES / f"{name}.py", folder / f"{name}.py")
    return folder


@pytest.fixture(name="install")
def install_fixture() -> Callable[..., Path]:
    """``install(folder, *names)`` copies fixture entry files into ``folder``."""
    return install
