"""What ``/init`` asks the model: look at the project and write a first AGENTS.md."""

from __future__ import annotations

from pathlib import Path

from vis_core.instructions.files import INSTRUCTION_NAMES

INIT_PROMPT = """Write a first `AGENTS.md` for this project at `{target}`: the instructions \
an agent (you, in later sessions) needs to work here well.

Find out from the project itself, not from guesses: read the README, the build and package \
files (pyproject.toml, package.json, Cargo.toml, Makefile, CI configuration…), list the layout \
and open a few central source and test files.{existing}

Then create the file with `patch("{target}", 0, text)`. Keep it short (at most about 40 lines, \
Markdown):
- one paragraph on what the project is;
- the commands to install, build, run the tests (one test too) and lint, exactly as they work;
- the layout: where the main code, tests and docs live;
- the conventions that are not obvious from the code (style, naming, how errors are handled, \
what a change needs before it is done).
Leave out what any agent knows already and what a linter enforces. When done, answer with \
a two-line summary of what you wrote."""

_EXISTING = (
    " The project already has {names}: keep what still holds in it and build on it ({note})."
)


def init_prompt(workspace: Path) -> str:
    """The request ``/init`` sends, naming the file to write (``AGENTS.md`` in the workspace,
    which the model can write) and the instruction files already there."""
    shown = "AGENTS.md"
    present = [name for name in INSTRUCTION_NAMES if (workspace / name).is_file()]
    existing = ""
    if present:
        note = (
            "rewrite AGENTS.md in place: read it, then patch it with its version"
            if "AGENTS.md" in present
            else "AGENTS.md is read instead of it from now on"
        )
        existing = _EXISTING.format(names=", ".join(f"`{n}`" for n in present), note=note)
    text = INIT_PROMPT.format(target=shown, existing=existing)
    if "AGENTS.md" in present:
        text = text.replace(f'create the file with `patch("{shown}", 0, text)`', "write it")
    return text
