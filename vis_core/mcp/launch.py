"""Where a stdio server starts: a neutral folder and a ``PATH`` that does not reach the workspace.

The person's own servers (user ``mcp.json``, extensions) start in every workspace, trusted or
not. From the workspace, ``npx -y pkg`` would run the checkout's ``node_modules/.bin`` copy and
``python -m server`` its ``server.py``; so they start in an empty private folder under Vis's
data folder (masked in the jail, nothing in it a checkout put there), unless the entry sets
``cwd``, with a ``PATH`` whose entries all lie outside the workspace. A project's own servers
(its ``.vis/mcp.json``, read only once the project is trusted) keep starting in the workspace.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from vis_core.paths import VisPaths
from vis_core.system.lifetime import keeper_command

START_FOLDER = "mcp-servers"  # under the data folder: where the person's stdio servers start


def start_folder(paths: VisPaths | None = None) -> Path:
    """The empty private folder (0700) the person's stdio servers start in."""
    return (paths or VisPaths.from_env()).data_dir / START_FOLDER


class CommandNotFound(FileNotFoundError):
    """A stdio server's command names no file; the message says where it was looked for (a
    long ``PATH`` by its first folders and how many more)."""


class CommandNotExecutable(PermissionError):
    """A stdio server's command names a file that is not executable; the message names it."""


class CommandNotProgram(OSError):
    """A stdio server's command names an executable file the system would not start (a text
    file, a script whose interpreter is missing); the message says what is wrong with it."""


def command_file(command: str, cwd: Path, path: str, *, depth: int = 0) -> Path:
    """The program ``command`` starts, found as the keeper's ``os.execvp`` finds it in ``cwd``
    (the server's folder) with ``path`` (the server's ``PATH``): a command with a ``/`` from
    ``cwd``, a bare name in each folder of ``path`` in turn (an empty or relative one from
    ``cwd``), then what it runs (``depth``: how many interpreters deep it is). Checked before
    the SDK is imported (a second of CPU) and anything is started, so a typo in ``mcp.json``
    fails its server at once. Raises :class:`CommandNotFound`, :class:`CommandNotExecutable`
    or :class:`CommandNotProgram`."""
    if os.sep in command:
        candidates = [cwd / command]
        missing = f"no such command or file (looked for {cwd / command})"
    else:
        folders = path.split(os.pathsep)
        candidates = [cwd / folder / command for folder in folders]
        missing = (
            f"no such command in the server's PATH ({_some(folders)})"
            if path
            else "no such command: the server's PATH is empty"
        )
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            _check_program(candidate, cwd, path, depth)
            return candidate
    unusable = next((c for c in candidates if c.is_file()), None)
    if unusable is not None:
        raise CommandNotExecutable(
            f"{unusable} is not executable (make it so with chmod +x, or start it with its "
            "interpreter)"
        )
    raise CommandNotFound(missing)


def _check_program(program: Path, cwd: Path, path: str, depth: int) -> None:
    """Raises :class:`CommandNotProgram` when the kernel would not start the executable file
    ``program`` in ``cwd`` (see :func:`command_file`): a text file without a ``#!`` line
    (ENOEXEC), or a script whose ``#!`` line names no interpreter, or one the kernel (or
    ``env``, on ``path``) does not find (ENOENT, which reads as if the script were missing) or
    could not start either. A file Vis cannot read, or whose first bytes are not text (a
    compiled program, or a format the kernel may have been taught: binfmt_misc), is left to
    start."""
    if depth > 4:  # as deep as the kernel follows interpreters
        return
    try:
        with program.open("rb") as file:
            head = file.read(256)  # as much as the kernel reads of it
    except OSError:
        return
    wrong = f"{program} is not a program Vis can run"
    if not head.startswith(b"#!"):
        if b"\0" in head or not _text(head):
            return
        raise CommandNotProgram(
            f"{wrong}: {'it is empty' if not head else 'a text file'}, with no first line "
            "such as #!/bin/sh naming its interpreter"
        )
    # as the kernel reads the line: the interpreter, then the rest as one argument
    line = head[2:].split(b"\n", 1)[0].replace(b"\t", b" ").strip(b" ")
    name, _, rest = (os.fsdecode(part) for part in line.partition(b" "))
    rest = rest.strip(" ")
    crlf = " (the file has Windows line endings)" if line.endswith(b"\r") else ""
    if not name:
        raise CommandNotProgram(f"{wrong}: its first line, #!, names no interpreter")
    interpreter = cwd / name
    named = f"{wrong}: its first line names the interpreter {name!r}, which"
    if not interpreter.is_file():
        raise CommandNotProgram(f"{named} does not exist{crlf}")
    if not os.access(interpreter, os.X_OK):
        raise CommandNotProgram(f"{named} is not executable")
    _check_program(interpreter, cwd, path, depth + 1)
    if interpreter.name == "env" and rest and not rest.startswith("-"):
        try:  # env looks its one argument up on the server's PATH
            command_file(rest, cwd, path, depth=depth + 1)
        except CommandNotFound as exc:
            raise CommandNotProgram(
                f"{wrong}: its first line runs {rest!r} with env: {exc}{crlf}"
            ) from None


def _text(head: bytes) -> bool:
    """Whether ``head``, the start of a file, reads as UTF-8 text (a character cut at its end
    too)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head)
    except UnicodeDecodeError:
        return False
    return True


def _some(folders: list[str], shown: int = 3) -> str:
    """The first ``shown`` of ``folders`` (a ``PATH``'s) and how many more: a PATH can be long,
    and the person's folders need not all reach the transcript and the model."""
    named = ", ".join(folder or "." for folder in folders[:shown])
    more = len(folders) - shown
    return f"{named} and {more} more folder{'' if more == 1 else 's'}" if more > 0 else named


def kept(command: str, args: list[str], cwd: Path, path: str) -> tuple[str, list[str]]:
    """``command args`` as the program and arguments that start it under a keeper
    (:mod:`vis_core.system.keeper`, mode ``server``): the SDK starts a server in a session of
    its own, tied to nothing, so a Vis ended by ``kill -9`` left it, and what it started (the
    ``node`` under ``npx``), running for ever; the keeper ends them with Vis. Raises as
    :func:`command_file` does when ``command`` is no program it could start."""
    command_file(command, cwd, path)
    keeper = keeper_command([command, *args], "server", None, -1)
    return keeper[0], keeper[1:]
