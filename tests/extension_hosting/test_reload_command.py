"""/reload reads the extensions again off the session's event loop, so the app stays live."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .harness import install_extension, open_host, write_script

SLOW = """
import time
import vis_core.extension as vis

time.sleep(0.5)  # a slow import: the registration worker takes this long on every load

vis.register_extension(vis.Extension(name="slow", description="Loads slowly."))
"""


async def test_reload_leaves_the_event_loop_free_while_the_extensions_load(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "slow", SLOW)
    write_script(script_path, [{"text": "Done."}])
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        reload = asyncio.create_task(host.commands.run(session, "/reload"))
        ticks = 0
        while not reload.done():  # the loop keeps turning while the worker loads "slow"
            ticks += 1
            await asyncio.sleep(0.01)
        result = await reload
        assert result.ok and result.title == "Reloaded extensions"
        assert "0 failed" in (result.body or "")
        assert ticks > 10  # a reload that blocked the loop would finish before the first tick
    finally:
        await host.close()
