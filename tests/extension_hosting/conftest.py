"""Fixtures of the extension hosting tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def script_path(tmp_path: Path) -> Path:
    return tmp_path / "script.yaml"
