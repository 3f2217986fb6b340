"""Figure: the CPU time each kind of Python child Vis starts costs, from its start until it has
served its first request and stopped: a sandbox child running its first block, a session's
extension worker loading the bundled extensions and a user one and running the user one's tool,
and a load-only (registration) worker screening one entry file.

This process keeps Vis's dataclass code in its (temporary) cache folder as the ``vis`` command
does, so the workers start as they do after a person's first run. Each round starts a fresh
child, does that one request, stops it, and reads the CPU time (user + system) of the children
this process waited for (``RUSAGE_CHILDREN``): the child itself and what it waited for (git),
and for the sandbox also its keeper (``python -I -S``, a few ms). CPU time, not wall-clock
time, so a loaded machine changes the figures less (it still does: caches are shared). Printed:
the median and the lowest of ROUNDS rounds per kind, kinds taken in turn.
Run (bytecode compiled first): ``.venv/bin/python bench/precompile.py &&
.venv/bin/python bench/child_start.py [ROUNDS [PYTHON]]``; PYTHON starts the sandbox child instead
of this interpreter (the workers always run this one), e.g. a script that runs it under
``valgrind --tool=callgrind`` to count its instructions (figures that do not change with the
machine's load). The anchor, a bare ``python -I -c pass`` of the same interpreter, runs in the
same rounds: each kind is also given as a multiple of it, a figure a loaded machine moves less.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROUNDS = 15
ANCHOR = "python -I -c pass (anchor)"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def _nothing(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return None


async def bare_python() -> None:
    """The anchor: the interpreter starts (with its ``site``) and does nothing."""
    process = await asyncio.create_subprocess_exec(sys.executable, "-I", "-c", "pass")
    assert await process.wait() == 0


async def sandbox_block(workspace: Path, python: str) -> None:
    """A sandbox child (no jail) starts, runs ``1`` and stops."""
    from vis_core.sandbox import Sandbox

    box = Sandbox(workspace=workspace, call_tool=_nothing, tools=lambda: [], python=python)
    result = await box.run("1")
    await box.close()
    assert result.error is None, result.error


EXTENSION = '''
import vis_core.extension as vis

def echo(value: int) -> int:
    """Return value unchanged."""
    return value

vis.register_extension(vis.Extension(
    name="bench", alias="bench", description="Bench.", symbols=[vis.Symbol(echo)]
))
'''


def session_worker(workspace: Path) -> Callable[[], Awaitable[None]]:
    """A session's worker loads the bundled extensions and a user one, and runs the user one's
    tool ``echo``."""
    from vis_core.extension_host.loader import load_extensions
    from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace
    from vis_core.paths import VisPaths

    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.py").write_text(EXTENSION, encoding="utf-8")
    loaded = load_extensions(include_packages=False)
    assert not loaded.errors, loaded.errors
    tool = next(t for t in loaded.host_tools() if t.owner == "bench")

    async def one() -> None:
        place = WorkerPlace("s1", workspace, workspace)
        worker = SessionWorker(lambda: loaded, place, {})
        try:
            await worker.call(tool, (1,), {})
        finally:
            worker.stop()

    return one


def registration_worker() -> Callable[[], Awaitable[None]]:
    """A load-only worker screens the bundled ``git`` extension's entry file."""
    from vis_core.extension_host.discovery import bundled_dir, scan_folder
    from vis_core.extension_host.registration import RegistrationWorker
    from vis_core.model.extensions import ExtensionSource
    from vis_core.system.environ import Audience, child_environment

    found = scan_folder(bundled_dir(), ExtensionSource.BUNDLED, set())
    candidate = next(c for c in found if c.entry_file.parent.name == "git")

    async def one() -> None:
        environment = child_environment({}, audience=Audience.VIS)
        worker = RegistrationWorker(environment, {})
        screened = worker.screen_all([candidate])[candidate.entry_file]
        assert screened.error is None, screened.error

    return one


async def main(rounds: int, python: str) -> None:
    with tempfile.TemporaryDirectory() as top:
        os.environ["VIS_HOME"] = str(Path(top) / "home")
        workspace = Path(top) / "ws"
        workspace.mkdir()
        from vis_core import codegen_cache

        codegen_cache.install()  # as the vis command does: what it keeps, the workers read
        kinds: dict[str, Callable[[], Awaitable[None]]] = {
            ANCHOR: bare_python,
            "sandbox child, first block": lambda: sandbox_block(workspace, python),
            "session worker, first tool call": session_worker(workspace),
            "load-only worker, one entry file": registration_worker(),
        }
        codegen_cache.save()
        taken: dict[str, list[float]] = {name: [] for name in kinds}
        for _ in range(rounds):
            for name, one in kinds.items():
                before = _children_cpu()
                await one()
                taken[name].append(_children_cpu() - before)
    print(f"CPU per child (user + system), {rounds} rounds, load {os.getloadavg()[0]:.1f}:")
    anchor = statistics.median(taken[ANCHOR])
    for name, seconds in taken.items():
        print(
            f"  {name:34s} median {statistics.median(seconds) * 1000:6.1f} ms, "
            f"lowest {min(seconds) * 1000:6.1f} ms, {statistics.median(seconds) / anchor:4.1f}x"
        )


if __name__ == "__main__":
    given = sys.argv[1:]
    asyncio.run(main(int(given[0]) if given else ROUNDS, given[1] if given[1:] else sys.executable))
