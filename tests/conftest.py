"""Shared fixtures: every test gets its own VIS_HOME and workspace."""

from __future__ import annotations

import compileall
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import vis_core
import vis_tui

SLOWEST = Path(__file__).with_name("slowest.txt")


def pytest_configure(config: pytest.Config) -> None:
    """Compile Vis's modules once, before the tests start (in xdist's controller only).

    Hundreds of tests start real ``vis``, sandbox and worker processes; where
    ``PYTHONDONTWRITEBYTECODE`` is set (as on the shared test machines), each of them
    compiled every Vis module it imported from source again, about 0.3 s of CPU a process.
    Reading ``.pyc`` files changes nothing the tests check: they are written beside the
    sources, as any first import does.
    """
    if hasattr(config, "workerinput"):
        return
    for package in (vis_core, vis_tui):
        compileall.compile_dir(package.__path__[0], quiet=2)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest tests (``tests/slowest.txt``, slowest first) run first; the rest keep their
    order. xdist hands tests out in this order, so the run does not end with one worker
    still in a long test while the other waits."""
    lines = SLOWEST.read_text(encoding="utf-8").splitlines()
    rank = {line: i for i, line in enumerate(x for x in lines if x and not x.startswith("#"))}
    items.sort(key=lambda item: rank.get(item.nodeid, len(rank)))


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


@pytest.fixture(autouse=True)
def shared_dataclass_code(
    vis_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The ``vis`` processes of the run share one dataclass code cache, as a person's runs do
    (it lives in ``$VIS_HOME/cache``, new for each test): the first one kept is linked into
    each later test's home (a process that adds to it replaces its own link, not the file)."""
    from vis_core.codegen_cache import cache_files

    [mine] = cache_files({"VIS_HOME": str(vis_home)})
    shared = tmp_path_factory.getbasetemp() / mine.name
    if shared.is_file():
        mine.parent.mkdir(mode=0o700, exist_ok=True)
        os.link(shared, mine)
    yield
    if not shared.exists() and mine.is_file():
        with contextlib.suppress(OSError):  # another test's got there first
            os.link(mine, shared)
