"""``vis.log`` to ``logs/YYYY-MM-DD/vis.log`` and ``vis.notify`` as a session notification."""

from __future__ import annotations

import time

import pytest

import vis_core.extension as vis
from vis_core.events import Notification
from vis_core.extension.logs import log_file

PINGER = '''
import vis_core.extension as vis

def ping(text: str) -> str:
    """Log and notify ``text``."""
    vis.log("warn", f"ping {text}")
    vis.notify(f"pinged {text}", "warn")
    return "pong"

vis.register_extension(vis.Extension(
    name="pinger", alias="pinger", description="Pings.", symbols=[vis.Symbol(ping)],
))
'''


async def test_tool_logs_and_notifies_in_its_session(extension, scripted):
    extension("pinger", PINGER)
    run = await scripted([{"code": 'print(await pinger.ping("there"))'}, {"text": "done"}])
    session = await run.session()
    await session.submit("ping")
    (block,) = run.blocks()
    assert block.error is None and "pong" in block.stdout
    notes = [e for e in run.events if isinstance(e, Notification)]
    assert [(n.session_id, n.text, n.kind) for n in notes] == [(session.id, "pinged there", "warn")]
    path = run.host.paths.logs_for_day(time.strftime("%Y-%m-%d")) / "vis.log"
    lines = [line for line in path.read_text().splitlines() if "[pinger]" in line]
    assert len(lines) == 1 and lines[0].split()[1:] == ["WARN", "[pinger]", "ping", "there"]


def test_log_and_notify_outside_vis(vis_home):
    vis.log("info", "loaded 3 rules\nand more")
    vis.notify("Rules reloaded", "success")
    text = log_file().read_text()
    assert "INFO  [vis] loaded 3 rules and more" in text
    assert "[vis] notification: Rules reloaded" in text
    with pytest.raises(ValueError, match="trace, debug, info, warn, error"):
        vis.log("fatal", "x")
    with pytest.raises(ValueError, match="info, success, warn, error"):
        vis.notify("x", "danger")
    with pytest.raises(ValueError, match="nonblank"):
        vis.notify("  ")
