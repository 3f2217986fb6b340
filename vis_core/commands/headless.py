"""Slash commands without a screen (``vis run "/init"``): which run, which are refused and why."""

from __future__ import annotations

from vis_core.commands import CommandRegistry, parse_command
from vis_core.model.command import is_command as is_command

# Commands that only open or change a screen of the app, with what to use instead.
SCREEN_ONLY: dict[str, str] = {
    "new": "each `vis run` starts a new session unless given --continue or --resume",
    "sessions": "`vis sessions [QUERY]` lists and searches them",
    "settings": "`vis settings` shows and changes them",
    "quit": "`vis run` ends when its turn ends",
    "login": "export the provider's key (e.g. ANTHROPIC_API_KEY) or use /login in the app",
    "reload": "each `vis run` reads the extensions afresh",
}


def command_refusal(registry: CommandRegistry, text: str) -> str | None:
    """Why the command ``text`` does not run without a screen; None when it runs."""
    name, _ = parse_command(text)
    if registry.find(name) is None:
        known = ", ".join(
            f"/{info.name}" for info in registry.all() if info.name not in SCREEN_ONLY
        )
        skipped = registry.skipped(name)
        return (
            f"/{name} is not a command; {f'{skipped}. The' if skipped else 'the'} commands "
            f"`vis run` runs: {known}. To send text that starts with /, put a word before it"
        )
    if name in SCREEN_ONLY:
        return f"/{name} needs the app's screen; {SCREEN_ONLY[name]}"
    return None
