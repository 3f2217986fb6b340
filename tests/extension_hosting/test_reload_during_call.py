"""A tool call cut off by /reload (its extension worker stopped under it) says /reload did it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

HANGS = """
import time
from pathlib import Path
import vis_core.extension as vis

def wait_forever(flag: str) -> str:
    \"\"\"Say it started, then never answer.\"\"\"
    Path(flag).write_text("started")
    time.sleep(60)
    return "never"

def prompt(context) -> str:
    return "The hang extension is loaded."

vis.register_extension(vis.Extension(
    name="hang", alias="hang", description="Hangs.",
    symbols=[vis.Symbol(wait_forever)], prompt=prompt,
))
"""


async def test_a_call_killed_by_reload_says_the_extensions_were_reloaded(
    vis_home: Path, workspace: Path, script_path: Path, tmp_path: Path
) -> None:
    install_extension(vis_home, "hang", HANGS)
    flag = tmp_path / "started"
    block = (
        "import json\n"
        "try:\n"
        f"    await hang.wait_forever({str(flag)!r})\n"
        "except Exception as exc:\n"
        "    print(json.dumps(str(exc)))\n"
    )
    write_script(script_path, code_turn(block))
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        turn = asyncio.create_task(run_turn(host, session_id=session.id))
        for _ in range(1000):  # the tool runs in the worker
            if flag.exists():
                break
            await asyncio.sleep(0.01)
        assert flag.exists()
        result = await host.commands.run(session, "/reload")
        assert result.ok
        outcome = await turn
        error = outcome.printed(0)
        assert "the extension worker ended while wait_forever ran: " in error, error
        assert "/reload" in error and "it stopped" not in error, error
    finally:
        await host.close()
