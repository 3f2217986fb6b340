"""Build metadata globals for extension entry files and python_execution."""

from __future__ import annotations

import re

import vis_core
from vis_core.extension import metadata


def test_build_metadata_has_the_four_globals() -> None:
    data = metadata.build_metadata()
    assert tuple(data) == metadata.METADATA_NAMES
    assert data["VIS_VERSION"] == vis_core.__version__
    assert data["VIS_PYTHON_RUNTIME_VERSION"] == vis_core.__version__
    assert data["VIS_PYTHON_SDK_VERSION"] == "0.1.0"  # the installed vis-agent distribution
    sha = data["VIS_SHA_RELEASE"]
    assert sha is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", sha)


def test_build_metadata_returns_a_fresh_dict() -> None:
    first = metadata.build_metadata()
    first["VIS_VERSION"] = "changed"
    assert metadata.build_metadata()["VIS_VERSION"] == vis_core.__version__


def test_checkout_commit_is_reported_with_its_dirty_mark() -> None:
    # this test suite runs from the git checkout, so the commit is known: git's own answer
    import subprocess

    root = metadata._source_root()

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout

    sha = git("rev-parse", "HEAD").strip()
    changed = git("status", "--porcelain", "--untracked-files=no").strip()
    assert metadata._release_sha() == (f"{sha}-dirty" if changed else sha)


def test_globals_computed_in_the_background_are_the_ones_build_metadata_returns() -> None:
    import subprocess
    import sys

    code = (
        "from vis_core.extension import metadata as m\n"
        "m.warm(); m.warm()\n"  # once: the second call starts nothing
        "assert len(m._warming) == 1\n"
        "data = m.build_metadata()\n"
        "assert not m._warming[0].is_alive()\n"
        "assert data == dict(m._computed()) and tuple(data) == m.METADATA_NAMES\n"
        "print(data['VIS_VERSION'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == vis_core.__version__


def test_the_background_thread_imports_nothing_beside_its_caller() -> None:
    """``warm()`` imports what its thread runs (the git runner, in a checkout) before it
    starts it: a thread importing beside ``vis run``'s own imports handed the GIL back and
    forth with them at every file either read."""
    import os
    import subprocess
    import sys

    code = (
        "import importlib.abc, sys, threading\n"
        "off_main = []\n"
        "class Spy(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if threading.current_thread() is not threading.main_thread():\n"
        "            off_main.append(name)\n"
        "sys.meta_path.insert(0, Spy())\n"
        "from vis_core.extension import metadata as m\n"
        "assert m._checkout() is not None\n"  # the thread runs git: this suite is a checkout
        "m.warm()\n"
        "m.build_metadata()\n"
        "print(off_main)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VIS_SHA_RELEASE"}
    # the first start here may read the installed distributions (then kept in VIS_HOME)
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
