"""A handle lent by an extension whose worker was restarted since (killed for a call deaf to its
cancel) says it is gone and why, not that a channel closed."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

COUNTERS = """
import vis_core.extension as vis
from vis_core.model.handles import HostHandle


class Counter(HostHandle):
    __vis_methods__ = ("bump",)

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> int:
        self.value += 1
        return self.value


def deaf() -> int:
    \"\"\"Counts in C, deaf to a cancel.\"\"\"
    return sum(range(10**13))


def counter() -> Counter:
    \"\"\"A fresh counter.\"\"\"
    return Counter()


vis.register_extension(vis.Extension(
    name="counters", alias="counters", description="Counters.",
    symbols=[vis.Symbol(counter), vis.Symbol(deaf)],
))
"""

BLOCK = """
import asyncio
counter = await counters.counter()
print(await counter.bump())
try:
    await asyncio.wait_for(counters.deaf(), 0.2)
except TimeoutError:
    pass
await asyncio.sleep(1.0)  # the worker is killed 0.3 s after the cancel
try:
    await counter.bump()
except Exception as exc:
    print(type(exc).__name__, exc)
print(await (await counters.counter()).bump())
"""


async def test_a_handle_of_a_restarted_worker_says_it_is_gone(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "counters", COUNTERS)
    write_script(script_path, code_turn(BLOCK))
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        (worker,) = host.registry.extension_workers.values()
        worker.times.cancel_grace = 0.3
        outcome = await run_turn(host, session_id=session.id)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        bumped, told, fresh = block.stdout.strip().splitlines()
        assert bumped == "1" and fresh == "1", block.stdout
        assert "is gone: the extension worker that held it was restarted" in told, told
        assert "ChannelClosed" not in block.stdout and "channel" not in told, told
    finally:
        await host.close()
