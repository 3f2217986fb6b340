"""Shared fixtures: every test gets its own VIS_HOME and workspace.

The pytest processes (each xdist worker, or the one process of a run without workers) run
Python's cyclic collector with larger thresholds than Python's own (``TEST_THRESHOLDS``): a
worker's heap holds its imports, the collected tests and what hundreds of closed Textual
apps left, and with Python's thresholds (700, 10, 10) a full collection walked all of it
again every dozen tests or so: 7-8 s of a worker's ~50 s of CPU, 2-4 s with these. Nothing
a test checks depends on when garbage is collected; the tests of what the app does with
the collector ask for Python's own thresholds (the ``python_collector`` fixture). The
processes the tests start (``vis``, the sandbox child, the extension workers) are not
tuned.
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import fnmatch
import gc
import json
import os
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import vis_core
import vis_tui

SLOWEST = Path(__file__).with_name("slowest.txt")
WARM_SERVERS = "warm_servers"  # the workers' input: the sockets of the run's fork servers
_warm_sockets = pytest.StashKey[dict[str, str]]()
WORKERS_PER_CORE = 2  # a third of a worker's time is spent waiting on its processes
PYTHON_THRESHOLDS = gc.get_threshold()  # Python's own, as a person's Vis runs with them
TEST_THRESHOLDS = (10000, 10, 10)  # a full collection every ~1 million allocations, not 70,000


@pytest.hookimpl(optionalhook=True, hookwrapper=True)  # pytest-timeout's hook
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Iterator[None]:
    """Before pytest-timeout fails a test that hangs (its SIGALRM), the tasks of the event loop
    the test runs are printed with their stacks: a hang in a loop shows only ``select`` in
    the threads' stacks, and the task names the await it sits in."""
    yield
    fail = signal.getsignal(signal.SIGALRM)
    if not callable(fail):
        return

    def tell_tasks(signum: int, frame: Any) -> None:
        loop = asyncio._get_running_loop()  # the test's, when the alarm lands in its select
        for task in asyncio.all_tasks(loop) if loop is not None else ():
            task.print_stack(file=sys.stderr)
        fail(signum, frame)

    signal.signal(signal.SIGALRM, tell_tasks)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: `-p no:xdist` runs without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers per usable core, so that one worker's test runs while the
    other's waits on a process, a server or a timeout (one per core left the cores idle a
    third of the time). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return WORKERS_PER_CORE * len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    """Compile Vis's modules once, before the tests start (in xdist's controller only).

    Hundreds of tests start real ``vis``, sandbox and worker processes; where
    ``PYTHONDONTWRITEBYTECODE`` is set (as on the shared test machines), each of them
    compiled every Vis module it imported from source again, about 0.3 s of CPU a process.
    Reading ``.pyc`` files changes nothing the tests check: they are written beside the
    sources, as any first import does. The bundled extensions too (as an installed Vis has
    them): each extension worker compiled their entry files and modules again (~4 ms).

    Under xdist the controller then starts the fork servers of the warm test processes
    (``warm_servers.share``) for all its workers, which each imported their own pair.
    """
    import warm_servers

    _collect_once_at_the_end(config)
    if hasattr(config, "workerinput"):
        warm_servers.use(config.workerinput.get(WARM_SERVERS, {}))
        return
    from vis_core.extension_host.discovery import bundled_dir

    for folder in (vis_core.__path__[0], vis_tui.__path__[0], bundled_dir()):
        compileall.compile_dir(folder, quiet=2)
    if config.getoption("numprocesses", None):
        _rewrite_test_modules(config)
        config.stash[_warm_sockets] = warm_servers.share()


def pytest_sessionstart(session: pytest.Session) -> None:
    """The collector's thresholds for the tests (the module's docstring says why), set before
    the tests are collected."""
    gc.set_threshold(*TEST_THRESHOLDS)


@pytest.hookimpl(optionalhook=True)  # xdist's hook, in its controller
def pytest_configure_node(node: Any) -> None:
    """Each worker launches warm processes through the run's fork servers."""
    node.workerinput[WARM_SERVERS] = node.config.stash.get(_warm_sockets, {})


def _collect_once_at_the_end(config: pytest.Config) -> None:
    """One full garbage collection as the session ends, not pytest's five: it looks for
    exceptions that an object's finaliser raised, and a worker's heap holds by then what
    Textual's caches kept of hundreds of apps (~0.6 s of CPU a collection, at the very end
    of the run while the other workers have finished). The first collection frees every
    cycle there is; the four after it found nothing more here. With another pytest (this is
    its private knob, pytester's) the five stay."""
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:
        return
    config.stash[gc_collect_iterations_key] = 1


def _rewrite_test_modules(config: pytest.Config) -> None:
    """Write pytest's rewritten test modules once, before the xdist workers start: where
    ``PYTHONDONTWRITEBYTECODE`` is set every worker rewrote the asserts of all of them again
    (about 3 s of CPU a worker). The workers read these files as pytest's own cache; with
    another pytest (these are its private functions) the workers just rewrite as before."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        tail, read, compiled, write = (
            rewrite.PYC_TAIL,
            rewrite._read_pyc,
            rewrite._rewrite_test,
            rewrite._write_pyc,
        )
    except (ImportError, AttributeError, KeyError):
        return
    patterns = ["conftest.py", *config.getini("python_files")]
    for folder in config.getini("testpaths"):
        for source in sorted((config.rootpath / folder).rglob("*.py")):
            if not any(fnmatch.fnmatch(source.name, p) for p in patterns):
                continue
            cached = rewrite.get_cache_dir(source) / (source.name[:-3] + tail)
            if read(source, cached) is None:
                with contextlib.suppress(OSError, SyntaxError):  # the worker will say
                    cached.parent.mkdir(exist_ok=True)
                    stat, code = compiled(source, config)
                    write(state, code, stat, cached)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The fork servers of the warm processes (``warm_servers.py``) end with the tests that
    used them: in the xdist controller once its workers have ended, in a run without workers
    once the session fixtures (the HTTP test server) have stopped theirs."""
    import warm_servers

    warm_servers.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest tests (``tests/slowest.txt``, slowest first) run first; the rest keep their
    order. xdist hands tests out in this order, so the run does not end with one worker
    still in a long test while the others wait."""
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
def python_collector() -> Iterator[None]:
    """Python's own collector thresholds for a test of what Vis does with them (the run's
    ``TEST_THRESHOLDS`` come back after it)."""
    tuned = gc.get_threshold()
    gc.set_threshold(*PYTHON_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*tuned)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of one HTTP MCP test server (``mcp_servers/server_app.py``)
    shared by the tests of a worker, in any folder: for tests of what Vis does with servers,
    not of stdio, one process serves them all (each server process imports the SDK)."""
    from web_server import web_server

    with web_server(Path(__file__).parent / "mcp_servers" / "server_app.py", "http") as base:
        yield base


@pytest.fixture
def jail_off(vis_home: Path) -> None:
    """The jail off in this test's VIS_HOME (``jail = false`` in config.toml): for tests of
    what happens without it (the jail is on by default where bubblewrap works)."""
    (vis_home / "config.toml").write_text("jail = false\n")


@pytest.fixture(autouse=True)
def shared_caches(vis_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The ``vis`` processes of the run share Vis's caches, as a person's runs do (they live in
    ``$VIS_HOME/cache``, new for each test): the dataclass code, the bundled extensions'
    declarations and the installed distributions. The first one kept is put into each later
    test's home: the dataclass code as a link (a process that adds to it replaces its own
    link, not the file), the small JSON files as copies (a test may write into its own)."""
    from vis_core import installed
    from vis_core.codegen_cache import cache_file
    from vis_core.extension_host import bundled_cache
    from vis_core.extension_host.discovery import bundled_dir

    environ = {"VIS_HOME": str(vis_home)}
    code = cache_file(environ)
    declared = bundled_cache.cache_file(environ)
    kept = {code: os.link, declared: shutil.copyfile, installed.cache_file(): shutil.copyfile}
    base = tmp_path_factory.getbasetemp()
    for mine, put in kept.items():
        shared = base / mine.name
        if shared.is_file():
            mine.parent.mkdir(mode=0o700, exist_ok=True)
            put(shared, mine)
    yield
    for mine, put in kept.items():
        shared = base / mine.name
        if shared.exists() or not mine.is_file():
            continue
        if mine == declared and not _of_the_shipped_folder(mine, str(bundled_dir())):
            continue  # a test's copy of the bundled folder: another key
        with contextlib.suppress(OSError):  # another test's got there first
            put(mine, shared)


def _of_the_shipped_folder(declared: Path, shipped: str) -> bool:
    """Whether the bundled extensions' cache ``declared`` is of Vis's own bundled folder."""
    try:
        return json.loads(declared.read_bytes())["key"]["bundled"] == shipped
    except (OSError, ValueError, KeyError, TypeError):
        return False
