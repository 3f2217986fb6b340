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
