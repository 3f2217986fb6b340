"""Shared fixtures: every test gets its own VIS_HOME and workspace."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def vis_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "vis-home"
    home.mkdir()
    monkeypatch.setenv("VIS_HOME", str(home))
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "VIS_MODEL"):
        monkeypatch.delenv(key, raising=False)
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def jail_off(vis_home: Path) -> None:
    """The jail off in this test's VIS_HOME (``jail = false`` in config.toml): for tests of
    what happens without it (the jail is on by default where bubblewrap works)."""
    (vis_home / "config.toml").write_text("jail = false\n")
