"""Figure: an extension tool round trip from python_execution, through the session's extension
worker, its Activity stored, beside the bare sandbox → host round trip in the same run.

A user extension's trivial tool is called CALLS times from one block of a scripted turn through
the real Host (sandbox child → host → extension worker → host, ActivityStarted/Ended stored in
SQLite); the block times each call. ROUNDS such turns run, each just after a block of the
anchor, so a machine whose load drifts affects both alike; the ratio is the median of the
rounds'. The session's event bus commits Activity events in groups (up to ``MAX_HELD`` events
or ``HOLD`` seconds, and before any other event or read of the store), so a call's time
includes its share of a group's transaction, and a few calls pay for a whole one; the count
printed is read from the store after the turns. The anchor is a host tool with no Activity,
timed the same way. Printed: both medians and their ratio. Target: ratio ≤ 2×.
Run: ``.venv/bin/python bench/extension_round_trip.py``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import tempfile
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

CALLS = 400  # per timed block
ROUNDS = 5  # anchor and worker blocks, in turn

EXTENSION = '''
import vis_core.extension as vis

def echo(value: int) -> int:
    """Return value unchanged."""
    return value

def drawn(value: int) -> int:
    """Return value unchanged; its Activity is drawn by a render callback."""
    return value

def _render(*, phase, args, kwargs, result, error):
    return vis.ActivityPresentation("Drawn", f"echoed {result}")

vis.register_extension(vis.Extension(
    name="bench", alias="bench", description="Bench.",
    symbols=[
        vis.Symbol(echo),
        vis.Symbol(drawn, activity=vis.Activity("Drawn", render=_render, show_start=False)),
    ],
))
'''


def timing_block(call: str) -> str:
    return textwrap.dedent(f"""
        import time as _t
        _times = []
        for _i in range({CALLS}):
            _s = _t.perf_counter()
            await {call}(_i)
            _times.append(_t.perf_counter() - _s)
        _times.sort()
        print(_times[len(_times) // 2])
    """)


async def _ping(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[0] if args else None


async def through_worker(
    folder: Path,
    tool: str = "echo",
    rounds: int = 1,
    between: Callable[[], Awaitable[float]] | None = None,
) -> tuple[list[tuple[float, float]], int]:
    """The median call of ``tool`` in each of ``rounds`` timed blocks (one turn each), beside
    what ``between`` measured just before each; and how many of its Activities were stored."""
    import yaml

    from vis_core.events import ActivityEnded, BlockFinished
    from vis_core.host import Host, HostOptions

    home = Path(os.environ["VIS_HOME"])
    (home / "extensions").mkdir(parents=True, exist_ok=True)
    (home / "extensions" / "bench.py").write_text(EXTENSION, encoding="utf-8")
    script = folder / "script.yaml"
    blocks: list[dict[str, str]] = [{"code": f"await {tool}(0)"}, {"text": "warm"}]
    blocks += [{"code": timing_block(tool)}, {"text": "done"}] * rounds
    script.write_text(yaml.safe_dump(blocks), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=folder, provider="scripted", script=script))
    try:
        session = await host.new_session()
        gc.freeze()  # as `vis` and `vis run` do once started: what exists lives as long
        events: list[Any] = []
        session.subscribe(events.append)
        await session.submit("warm")
        pairs = []
        for _ in range(rounds):
            other = await between() if between is not None else 0.0
            await session.submit("go")
            finished = [e for e in events if isinstance(e, BlockFinished)]
            if finished[-1].error:
                sys.exit(finished[-1].error)
            pairs.append((float(finished[-1].stdout.strip()), other))
        stored = [
            e.event
            for e in host.store.events(session.id)
            if isinstance(e.event, ActivityEnded) and e.event.activity.tool == tool
        ]
        return pairs, len(stored)
    finally:
        await host.close()


async def main() -> None:
    from vis_core.sandbox import Sandbox, ToolEntry

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["VIS_HOME"] = str(folder / "home")
        work = folder / "work"
        work.mkdir()
        box = Sandbox(workspace=work, call_tool=_ping, tools=lambda: [ToolEntry("ping")])

        async def bare() -> float:
            result = await box.run(timing_block("ping"))
            if result.error:
                sys.exit(result.error)
            return float(result.stdout.strip())

        try:
            await box.run("pass")
            pairs, stored = await through_worker(work, rounds=ROUNDS, between=bare)
        finally:
            await box.close()
        drawn = statistics.median(t for t, _ in (await through_worker(work, "drawn"))[0])
    worker = statistics.median(t for t, _ in pairs)
    anchor = statistics.median(b for _, b in pairs)
    ratio = statistics.median(t / b for t, b in pairs)
    print(
        f"extension tool through its worker, Activity stored: median {worker * 1000:.3f} ms per "
        f"call ({ROUNDS} rounds of {CALLS:,} calls, {stored:,} Activities stored)"
    )
    print(f"the same with a render callback (drawn in the worker): median {drawn * 1000:.3f} ms")
    print(f"anchor, bare sandbox → host round trip: median {anchor * 1000:.3f} ms per call")
    print(
        f"ratio: {ratio:.2f}× (median of the {ROUNDS} rounds' ratios, each round the anchor's "
        "block just before the worker's; target ≤ 2×)"
    )


if __name__ == "__main__":
    asyncio.run(main())
