"""The header a new session opens with: version, model, workspace, trust state, jail mode,
three tips."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from vis_core.frontend import shorten_path

TIPS = (
    ("/", "commands, with their usage as you type"),
    ("Esc", "interrupts a turn; queued messages wait for Enter"),
    ("F1", "every key · F2 settings · PageUp scrolls back"),
)


def welcome_content(
    version: str,
    model: str,
    workspace: Path,
    *,
    trusted: bool,
    lapsed: bool = False,
    jail: tuple[bool, str] | None = None,
    instructions: Sequence[tuple[str, int]] = (),
) -> Content:
    """``lapsed``: not trusted because the project's control files changed since the person
    trusted it (said as the start note says it); ``jail``: whether the session runs jailed
    and the line that says so (``Workspace.jail_mode``); ``instructions``: the instruction
    files in the system prompt and their size in tokens."""
    where = shorten_path(str(workspace), "/nonexistent-workspace")
    untrusted = "not trusted: changed since you trusted it" if lapsed else "not trusted"
    trust = ("trusted project", "$text-success") if trusted else (untrusted, "$text-warning")
    sep = ("  ·  ", "$text-muted")
    parts: list[Content | tuple[str, str] | str] = [
        (f"Vis {version}", "bold $text-accent"),
        sep,
        (model or "no model", "bold" if model else "$text-warning"),
        sep,
        where,
        sep,
        trust,
    ]
    if jail is not None:
        jailed, line = jail
        parts.extend(["\n", (line, "$text-success" if jailed else "$text-warning")])
    if instructions:
        named = "  ·  ".join(f"{label} ~{tokens:,} tokens" for label, tokens in instructions)
        parts.extend(["\n", ("instructions: ", "$text-muted"), named])
    for key, what in TIPS:
        parts.extend(["\n", (f"  {key:<4}", "bold"), (what, "$text-muted")])
    return Content.assemble(*parts)


class WelcomeHeader(Static):
    """Shown at the top of a session that has no turns yet."""

    DEFAULT_CSS = """
    WelcomeHeader {
        border: round $primary 60%; padding: 0 1; margin-bottom: 1; height: auto;
    }
    """
