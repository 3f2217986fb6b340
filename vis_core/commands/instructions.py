"""``/init``: ask the model to write a first AGENTS.md for the project."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.commands import CommandResult, PromptToSend, send_prompt
from vis_core.extension.declarations import SlashCommand
from vis_core.instructions.init_prompt import init_prompt

if TYPE_CHECKING:
    from vis_core.command_host import CommandDeps


def init_command(deps: CommandDeps) -> SlashCommand:
    def run(ctx: dict[str, Any]) -> CommandResult:
        text = init_prompt(deps.space.root)
        return send_prompt("Writing AGENTS.md", PromptToSend(text, label="/init"))

    return SlashCommand(
        "init",
        run,
        "Ask the model to write a first AGENTS.md from what it finds in the project",
        "/init",
    )
