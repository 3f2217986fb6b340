"""A session's tool set: built on first use, and built again after a reset (a reload)."""

from __future__ import annotations

import threading

from vis_core.session_tools import SessionTools, ToolSet
from vis_core.tools.registry import HostTool, ToolRegistry


def test_a_set_built_across_a_reset_is_not_kept() -> None:
    """A thread (the sandbox's start, the prompt's) builds the set while the loop reloads the
    extensions: what it built may hold the old extensions' tools, so the next use builds the
    set again instead of keeping it until the reload after."""
    tool_names = ["old"]
    building, reset_done = threading.Event(), threading.Event()

    def build(tools: SessionTools) -> ToolSet:
        names = list(tool_names)
        if names == ["old"]:  # the first build: a reload comes while it runs
            building.set()
            assert reset_done.wait(30)
        return ToolSet(ToolRegistry([HostTool(name, print) for name in names]))

    tools = SessionTools(build)
    seen: list[ToolRegistry] = []
    thread = threading.Thread(target=lambda: seen.append(tools.full()))
    thread.start()
    assert building.wait(30)
    tool_names[:] = ["new"]  # the reload: new extensions, then the reset
    tools.reset()
    reset_done.set()
    thread.join(30)
    assert "old" in seen[0]  # the thread's own answer, asked before the reset ended
    after = tools.full()
    assert "new" in after and "old" not in after
    assert tools.full() is after  # kept from then on
