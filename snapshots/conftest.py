"""Snapshot fixtures: fixed VIS_HOME and workspace paths so every SVG baseline is stable."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path("/tmp/vis-snapshots")


@pytest.fixture(autouse=True)
def fixed_places(monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean ``/tmp/vis-snapshots`` with ``home`` (VIS_HOME) and ``project`` (workspace)."""
    shutil.rmtree(ROOT, ignore_errors=True)
    (ROOT / "home").mkdir(parents=True)
    (ROOT / "project").mkdir()
    monkeypatch.setenv("VIS_HOME", str(ROOT / "home"))
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "VIS_MODEL", "VISUAL", "EDITOR"):
        monkeypatch.delenv(key, raising=False)
    return ROOT / "project"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Snapshots share the fixed /tmp/vis-snapshots folder, so they run on one xdist worker."""
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.xdist_group("snapshots"))
