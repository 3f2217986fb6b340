"""Fixtures for the built-in tool tests: a ToolContext over the per-test workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.tools import ToolContext, builtin_tools


@pytest.fixture
async def ctx(workspace: Path, tmp_path: Path):
    context = ToolContext(workspace, "session-1", tmp_path / "outputs")
    yield context
    await context.close()


@pytest.fixture
def tools(ctx: ToolContext) -> dict:
    return {tool.name: tool for tool in builtin_tools(ctx)}
