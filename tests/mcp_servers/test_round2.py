"""Round 2 of the MCP chapter: reconnects, deferred tools after a resume, the servers section
in the conversation, ``doc("mcp__<server>")``, waits, retries, hints and shutdown."""

from __future__ import annotations

from pathlib import Path

from .conftest import stdio_entry, write_config
from .test_run import _of, _run

DROP = """
try:
    await mcp__st__die()
except Exception as exc:
    print("dropped:", str(exc).split(":")[0])
print(await mcp__st__echo(text="back in the same block"))
"""


def test_a_dropped_server_reconnects_on_the_next_call_of_the_same_block(
    vis_home: Path, workspace: Path
) -> None:
    write_config(vis_home / "mcp.json", {"st": stdio_entry(toolExposure={"echo": "direct"})})
    script = [
        {"code": DROP},
        {"tool": {"name": "mcp__st__echo", "arguments": {"text": "direct again"}}},
        {"code": "await mcp__st__die()"},
        {"tool": {"name": "mcp__st__echo", "arguments": {"text": "direct after a drop"}}},
        {"text": "done"},
    ]
    events = _run(vis_home, workspace, script)
    blocks = _of(events, "BlockFinished")
    assert blocks[0]["stdout"].splitlines() == [
        "dropped: ConnectionLost",
        "back in the same block",
    ], blocks[0]["error"]
    assert blocks[1]["stdout"] == "direct again" and blocks[1]["error"] is None
    assert "ConnectionLost" in (blocks[2]["error"] or "")
    assert blocks[3]["stdout"] == "direct after a drop", blocks[3]["error"]
