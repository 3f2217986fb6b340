"""Figure: what the extensions' part of one model request costs (activation + prompt callbacks).

Through the real Host: one user extension with a callable ``prompt`` and ``activation`` beside
the bundled ones (git, todo). Timed REQUESTS times each, in one run:
  - worker: ``extension_prompts`` through the session's extension worker (all of one kind at
    once; no extension code runs in the host, so there is no in-process row to compare);
  - request: ``session.system_prompt()`` and ``session.build_request()`` as the loop calls them
    (system prompt + tools + messages).
Printed: medians and 90th percentiles in ms; and how long the first request of a session
blocks the event loop while its worker starts: at once, and 1 s after the session opened (the
worker is started in the background when the session opens).
Run: ``.venv/bin/python bench/extension_prompts.py``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REQUESTS = 500

EXTENSION = """
import vis_core.extension as vis

def _prompt(env):
    return f"Work in {env['workspace_root']}."

vis.register_extension(vis.Extension(
    name="steer", description="Bench prompt.", prompt=_prompt, activation=lambda env: True,
))
"""


async def _times(fn: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    await fn()  # warm (the worker starts on the first one)
    samples = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9)]


async def _request(session: Any) -> object:
    """The next request as the agent loop builds it: its system prompt, then the rest."""
    return session.build_request(await session.system_prompt())


async def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="vis-bench-"))
    os.environ["VIS_HOME"] = str(home)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    (home / "extensions").mkdir(parents=True)
    (home / "extensions" / "steer.py").write_text(EXTENSION)
    workspace = home / "work"
    workspace.mkdir()
    from vis_core.extension_host.prompts import extension_prompts
    from vis_core.host import Host, HostOptions

    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        session = await host.new_session()
        start = time.perf_counter()
        await _request(session)
        at_once = (time.perf_counter() - start) * 1000
        later = await host.new_session()
        await asyncio.sleep(1.0)
        start = time.perf_counter()
        await _request(later)
        after_idle = (time.perf_counter() - start) * 1000
        print(
            f"first request: at once {at_once:.1f} ms, 1 s after the session opened "
            f"{after_idle:.1f} ms"
        )
        worker = host.registry.extension_workers[session.id]
        env = {
            "cwd": str(workspace),
            "workspace_root": str(workspace),
            "project_root": str(workspace),
            "session_id": session.id,
            "channel": "tui",
        }
        loaded = host.catalog.loaded
        names = [ext.name for ext in loaded.enabled]
        rows = {
            "worker (session worker)": lambda: extension_prompts(loaded, env, worker),
            "request (whole request)": lambda: _request(session),
        }
        print(f"extensions: {', '.join(names)}; {REQUESTS} requests each")
        for label, fn in rows.items():
            median, p90 = await _times(fn)
            print(f"{label:32s} median {median:.3f} ms   p90 {p90:.3f} ms")
    finally:
        await host.close()


if __name__ == "__main__":
    asyncio.run(main())
