"""Open a file in the person's ``$VISUAL``/``$EDITOR`` with the app suspended meanwhile."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from vis_core.frontend import host_program

NO_EDITOR = (
    "Set $VISUAL or $EDITOR (for example `export EDITOR=nano` in your shell profile) "
    "so Vis can open {path}."
)


def editor_command(path: Path, environ: dict[str, str] | None = None) -> list[str] | None:
    """The editor command line for ``path``, or None when neither variable is set."""
    env = os.environ if environ is None else environ
    editor = env.get("VISUAL") or env.get("EDITOR")
    if not editor or not editor.strip():
        return None
    return [*shlex.split(editor), str(path)]


def chip_file(path: str, roots: Iterable[Path]) -> Path | None:
    """The file a chip's ``path`` names (a saved output, an attachment, a failing test's
    file), relative ones in the first root, when it lies in one of ``roots`` (the workspace,
    Vis's data folder), links followed; else None: a path a tool took from the model's
    output (a test report's ``file``) never opens ``/etc/hosts`` or ``~/.ssh/config``."""
    folders = [root.resolve() for root in roots]
    if not folders:
        return None
    target = (folders[0] / Path(path).expanduser()).resolve()  # an absolute path replaces it
    return target if any(target.is_relative_to(folder) for folder in folders) else None


def workspace_file(path: str, workspace: Path) -> Path | None:
    """The file a link's ``path`` names (a model's ``[the diff](src/a.py)``) when it lies in
    the workspace, links followed; else None: a link never opens ``~/.ssh/config`` or
    ``../../etc/hosts`` in the editor."""
    if path.startswith("~"):  # a home folder's, not a workspace folder named ``~``
        return None
    return chip_file(path, [workspace])


def run_editor(command: list[str]) -> str | None:
    """Run the editor and wait; returns an error text a person can act on, or None. A bare
    name is looked up in absolute ``PATH`` entries outside the working folder only, so a
    checkout's ``bin/nano`` (a relative ``PATH`` entry) never runs in the editor's place."""
    if "/" not in command[0]:
        found = host_program(command[0], (Path.cwd(),))
        if found is None:
            return (
                f"The editor {command[0]!r} was not found (in PATH's absolute folders outside "
                "this workspace); check $VISUAL / $EDITOR."
            )
        command = [found, *command[1:]]
    try:
        result = subprocess.run(command, check=False)
    except FileNotFoundError:
        return f"The editor {command[0]!r} was not found; check $VISUAL / $EDITOR."
    except OSError as exc:
        return f"The editor {command[0]!r} could not start: {exc}. Check $VISUAL / $EDITOR."
    if result.returncode != 0:
        return f"The editor {command[0]!r} exited with status {result.returncode}."
    return None


def edit_text(text: str, run: Callable[[list[str]], str | None]) -> tuple[str | None, str | None]:
    """``text`` edited in the person's editor (through ``run``, which suspends the app):
    (the new text, None), or (None, what went wrong). The file is private and removed after."""
    fd, name = tempfile.mkstemp(prefix="vis-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        command = editor_command(path)
        if command is None:
            return None, NO_EDITOR.format(path="the prompt")
        problem = run(command)
        if problem:
            return None, problem
        edited = path.read_text(encoding="utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
    return edited.removesuffix("\n") if not text.endswith("\n") else edited, None
