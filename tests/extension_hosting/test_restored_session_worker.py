"""A session restored in a thread (its history read off the loop) still has its extension
worker answered on the host's loop: a tool call, and the SDK calls it makes back, end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

KEEPER = """
import vis_core.extension as vis


def keep(value: int) -> int:
    \"\"\"Keeps ``value`` in the session's state and reads it back.\"\"\"
    vis.state["kept"] = value
    return vis.state.get("kept") + 1


vis.register_extension(vis.Extension(
    name="keeper", alias="keeper", description="Keeps a value.",
    symbols=[vis.Symbol(keep)],
))
"""


async def test_a_restored_sessions_worker_is_answered_on_the_loop(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "keeper", KEEPER)
    write_script(
        script_path, code_turn("print(await keeper.keep(1))", "print(await keeper.keep(41))")
    )
    host = await open_host(workspace, script_path)
    try:
        first = await host.new_session()
        host.store.set_title(first.id, "Kept")  # a session nobody used is not kept
        await host.close_session(first)
        # built in a thread (``asyncio.to_thread``): no running loop there
        outcome = await asyncio.wait_for(run_turn(host, session_id=first.id), 60)
        assert [b.stdout.strip() for b in outcome.blocks] == ["2", "42"], outcome.blocks
    finally:
        await host.close()
