"""Snapshot fixtures: fixed VIS_HOME and workspace paths so every SVG baseline is stable."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from pathlib import Path

import closed_apps
import pytest
import textual_css_cache

ROOT = Path("/tmp/vis-snapshots")
LOCK = Path("/tmp/vis-snapshots.lock")
SNAPSHOT_JAIL = "not tried in snapshot tests"

textual_css_cache.install()  # one parse of each stylesheet per process, for all its apps


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Later tests' collections do not walk this one's apps (tests/closed_apps.py)."""
    yield
    closed_apps.release()


@pytest.fixture(autouse=True)
def fixed_places(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A clean ``/tmp/vis-snapshots`` with ``home`` (VIS_HOME) and ``project`` (workspace).

    The paths are part of the pictures, so they cannot vary; a lock beside the folder lets
    test runs of several checkouts at once take turns instead of deleting each other's files.
    The home's caches are the run's, as in tests/conftest.py's ``shared_caches`` (the files
    of the worker's temporary folder): without the bundled extensions' declarations each
    picture's app started a registration worker.
    """
    shared = tmp_path_factory.getbasetemp()
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        project = _fresh_places(monkeypatch)
        names = _cache_names()
        cache = ROOT / "home" / "cache"
        _add_missing(names, shared, cache)
        yield project
        _add_missing(names, cache, shared)


def _cache_names() -> tuple[str, ...]:
    """The names of Vis's cache files in ``$VIS_HOME/cache`` (as ``shared_caches`` keeps)."""
    from vis_core import installed
    from vis_core.codegen_cache import cache_file
    from vis_core.extension_host import bundled_cache

    return (cache_file().name, bundled_cache.FILE_NAME, installed.cache_file().name)


def _add_missing(names: tuple[str, ...], source: Path, target: Path) -> None:
    """Copy the files ``names`` of ``source`` that ``target`` lacks (never into one it has:
    the run's shared copy of a file may be linked from other tests' homes)."""
    target.mkdir(mode=0o700, exist_ok=True)
    for name in names:
        if (source / name).is_file() and not (target / name).exists():
            shutil.copyfile(source / name, target / name)


def _fresh_places(monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.rmtree(ROOT, ignore_errors=True)
    (ROOT / "home").mkdir(parents=True)
    (ROOT / "project").mkdir()
    monkeypatch.setenv("VIS_HOME", str(ROOT / "home"))
    # the welcome header says whether the jail can run: the same words on every machine
    monkeypatch.setattr("vis_core.system.jail_check.jail_problem", lambda: SNAPSHOT_JAIL)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "VIS_MODEL", "VISUAL", "EDITOR"):
        monkeypatch.delenv(key, raising=False)
    return ROOT / "project"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Snapshots share the fixed /tmp/vis-snapshots folder, so they run on one xdist worker."""
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.xdist_group("snapshots"))
