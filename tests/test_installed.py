"""Installed versions and entry points are read once and kept while sys.path is unchanged."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from vis_core import installed


def _no_read(*_: object, **__: object) -> None:
    raise AssertionError("the installed distributions were read again")


def test_a_version_is_read_once_and_then_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "installed.json"
    expected = importlib.metadata.version("vis-agent")
    assert installed.version("vis-agent", cache) == expected
    assert installed.version("no-such-distribution-here", cache) is None
    with monkeypatch.context() as patched:
        patched.setattr(importlib.metadata, "version", _no_read)
        assert installed.version("vis-agent", cache) == expected
        assert installed.version("no-such-distribution-here", cache) is None


def test_a_changed_sys_path_reads_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "installed.json"
    installed.version("vis-agent", cache)
    extra = tmp_path / "site"
    extra.mkdir()
    monkeypatch.syspath_prepend(str(extra))
    calls: list[str] = []
    real = importlib.metadata.version

    def counted(name: str) -> str:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", counted)
    installed.version("vis-agent", cache)
    assert calls == ["vis-agent"]


def test_the_answers_of_another_sys_path_are_kept_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vis's workers start isolated (no script folder on sys.path): their answers must not
    # replace those of vis, or every start of each reads the distributions again
    cache = tmp_path / "installed.json"
    expected = importlib.metadata.version("vis-agent")
    installed.version("vis-agent", cache)
    extra = tmp_path / "site"
    extra.mkdir()
    with monkeypatch.context() as worker:
        worker.syspath_prepend(str(extra))
        assert installed.version("vis-agent", cache) == expected
    monkeypatch.setattr(importlib.metadata, "version", _no_read)
    assert installed.version("vis-agent", cache) == expected
