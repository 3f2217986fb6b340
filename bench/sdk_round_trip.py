"""Figure: an SDK call an extension makes back to the host, from its tool in the session's
extension worker, through the real Host: ``Setting.value()`` (served in a thread of the host:
it reads the settings and the store) and ``vis.notify`` (served on the host's loop: the
notification is saved, then shown) — the worker times each call.

The tool makes CALLS of each in a row; ROUNDS turns run it; printed: the median call of each
kind (the median of the rounds' medians). Run: ``.venv/bin/python bench/sdk_round_trip.py``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

CALLS = 200  # of each kind, per round
ROUNDS = 5

EXTENSION = f'''
import json
import time

import vis_core.extension as vis

LEVEL = vis.Setting(id="bench_level", label="Level", type="string", default="low")


def _median(fn) -> float:
    times = []
    for _ in range({CALLS}):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def sdk_times() -> str:
    """The median time of each kind of SDK call, as JSON."""
    return json.dumps({{
        "setting": _median(LEVEL.value),
        "notify": _median(lambda: vis.notify("tick")),
    }})


vis.register_extension(vis.Extension(
    name="bench", alias="bench", description="Bench.", settings=[LEVEL],
    symbols=[vis.Symbol(sdk_times)],
))
'''


async def main() -> None:
    import json

    import yaml

    from vis_core.events import BlockFinished
    from vis_core.host import Host, HostOptions

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        home = folder / "home"
        os.environ["VIS_HOME"] = str(home)
        (home / "extensions").mkdir(parents=True)
        (home / "extensions" / "bench.py").write_text(EXTENSION, encoding="utf-8")
        work = folder / "work"
        work.mkdir()
        script = folder / "script.yaml"
        turn = [{"code": "print(await sdk_times())"}, {"text": "done"}]
        script.write_text(yaml.safe_dump(turn * (ROUNDS + 1)), encoding="utf-8")
        host = await Host.open(HostOptions(workspace=work, provider="scripted", script=script))
        try:
            session = await host.new_session()
            events: list[object] = []
            session.subscribe(events.append)
            rounds = []
            for index in range(ROUNDS + 1):  # the first warms the worker up
                await session.submit("go")
                finished = [e for e in events if isinstance(e, BlockFinished)]
                if finished[-1].error:
                    sys.exit(finished[-1].error)
                if index:
                    rounds.append(json.loads(finished[-1].stdout))
        finally:
            await host.close()
    for kind in ("setting", "notify"):
        median = statistics.median(r[kind] for r in rounds)
        print(f"{kind}: median {median * 1000:.3f} ms per call ({ROUNDS} rounds of {CALLS})")


if __name__ == "__main__":
    asyncio.run(main())
