"""The system prompt: how to work in python_execution, the tools at hand, the build, the project."""

from __future__ import annotations

import platform
from collections.abc import Iterable
from pathlib import Path

from vis_core.tools.registry import HostTool

PYTHON_EXECUTION_DESCRIPTION = (
    "Run Python in this session's persistent sandbox. Variables, functions and imports survive "
    "between calls; top-level `await` works. Every Vis tool is an async function in the namespace "
    "(await it). Only what you print() comes back to you: at most its last 2,000 lines or 50 KB, "
    "cut at line boundaries after a note that names the file holding the full output. "
    "`session` is rebuilt before each block: the turn, the workspace roots, the context budget "
    '(`session["utilization"]`, with a fold `hint` when the budget calls for one) and what '
    "extensions add."
)

PYTHON_EXECUTION_PARAMETERS = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "Python source to run."}},
    "required": ["code"],
}

_INTRO = """You are Vis, a coding agent working in the user's workspace through Python.

Answer by calling `python_execution` with Python code. The sandbox is persistent: define helpers
once and reuse them (`defs()` lists them). Every tool below is an async function: `await` it and
print() what you need to see. Prefer reading with `cat` and `grep`, which give `path @version`
headers and numbered lines, and edit with `patch(path, version, edits)` using those line numbers.
When the work is done, answer in plain text (Markdown) without calling a tool."""

_DISCOVERY = "Use `apropos(pattern)` to find tools and guides and `doc(name)` to read one."


def tool_lines(tools: Iterable[HostTool]) -> str:
    """One line per visible tool: its name and the first line of its docstring. MCP tools
    are left out (the ``MCP servers`` section says how to reach them), so the prompt does not
    change as servers connect."""
    lines = []
    for tool in tools:
        if tool.is_hidden or tool.name.startswith("_") or tool.owner == "mcp":
            continue
        gist = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        lines.append(f"- `{tool.name}`: {gist}" if gist else f"- `{tool.name}`")
    return "\n".join(lines)


def system_prompt(
    *,
    tools: Iterable[HostTool],
    workspace: Path,
    project_root: Path,
    build: dict[str, str | None],
    extension_prompts: str = "",
    instructions: str = "",
    skills: str = "",
) -> str:
    """The system prompt; ``instructions`` (the ``## Instructions`` section, read at the
    turn's start) sits after the environment, before what extensions add per request."""
    tools = list(tools)
    intro = _INTRO
    if any(tool.name == "doc" for tool in tools):
        intro += "\n" + _DISCOVERY
    parts = [
        intro,
        "## Tools\n" + (tool_lines(tools) or "(none)"),
        "## Environment\n"
        f"- workspace: {workspace}\n"
        f"- project root: {project_root}\n"
        f"- platform: {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}\n"
        + "".join(f"- {key}: {value}\n" for key, value in build.items()),
    ]
    if instructions.strip():
        parts.append(instructions.strip())
    if skills.strip():
        parts.append(skills.strip())
    if extension_prompts.strip():
        parts.append("## Extensions\n" + extension_prompts.strip())
    return "\n\n".join(parts)
