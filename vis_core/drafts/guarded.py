"""Files a draft's approval never writes (a ``.git``, or what makes a folder a bare git
repository: the person's git would run what its config names) and files it writes only with
a warning (a project's control files)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from vis_core.drafts.errors import DraftError
from vis_core.model.lines import on_one_line
from vis_core.system.git_dirs import SHAPE, Shape, shape_at
from vis_core.system.jail import PROTECTED_NAMES, PROTECTED_PREFIX

SHOWN = 20  # names a refusal or a warning lists


def repository_files(names: Sequence[str]) -> list[str]:
    """Those of ``names`` in a ``.git`` (a folder or a file, at any depth), compared
    case-insensitively: a case-folding filesystem takes ``.GIT`` for ``.git``."""
    return [n for n in names if any(p.casefold() == ".git" for p in PurePosixPath(n).parts)]


def made_repositories(names: Sequence[str], roots: Sequence[Path]) -> dict[str, list[str]]:
    """The folders ``names`` lie in (the top too) that git takes as a bare repository once
    approval wrote them: their shape in ``roots`` (the draft's copy and the live workspace)
    taken together. Each with the names it writes there: those that make the shape and its
    ``config`` (removing them undoes it), else every name it writes inside."""
    split = [(n, PurePosixPath(n).parts) for n in names]
    folders = sorted({parts[:depth] for _, parts in split for depth in range(len(parts))})
    made: dict[str, list[str]] = {}
    making = {name.casefold() for name in (*SHAPE, "config")}
    for folder in folders:
        shape = Shape()
        for root in roots:
            shape |= shape_at(root, folder)
        if not shape.bare:
            continue
        inside = [(n, p[len(folder)]) for n, p in split if p[: len(folder)] == folder]
        named = [n for n, first in inside if first.casefold() in making]
        made["/".join(folder)] = named or [n for n, _ in inside]
    return made


def among_control_files(names: Sequence[str]) -> list[str]:
    """Those of ``names`` the jail keeps read-only besides ``.git`` (``.vis/``, ``vis.yml``,
    ``.env*``, other agents' settings such as ``.claude/``, at any depth, case-insensitively):
    what decides how Vis, or another agent, runs the project."""
    guarded = {name.casefold() for name in PROTECTED_NAMES} - {".git"}
    return [
        n
        for n in names
        if any(
            p.casefold() in guarded or p.casefold().startswith(PROTECTED_PREFIX)
            for p in PurePosixPath(n).parts
        )
    ]


def listed(names: Sequence[str], each: Callable[[str], str] = on_one_line) -> str:
    """``names`` on one line, each escaped (a name holding a line break stays one name);
    ``each``: how one name is shown (a Markdown code span where the text is Markdown)."""
    shown = ", ".join(each(n) for n in names[:SHOWN])
    return shown + (f" … ({len(names)} in all)" if len(names) > SHOWN else "")


def refuse_repository(label: str, names: Sequence[str], roots: Sequence[Path] = ()) -> None:
    """:class:`DraftError` when the draft writes into a ``.git``, or makes (or writes into) a
    folder git takes as a bare repository (:func:`made_repositories` in ``roots``): nothing
    is approved."""
    found = repository_files(names)
    if found:
        raise DraftError(
            f"draft {label} writes into a .git ({listed(found)}): git run in your workspace "
            "would read that configuration and hooks, which can run programs "
            "(core.fsmonitor, hooks). Approval never writes a .git, so nothing was approved. "
            "Remove those files from the draft (or discard it), then approve again"
        )
    made = made_repositories(names, roots)
    if made:
        raise DraftError(
            f"draft {label} {repositories_made(made)}: git run there or below would read "
            "its config, which can run programs (core.fsmonitor, hooks). Approval never "
            "writes a git repository, so nothing was approved. Remove those files from the "
            "draft (or discard it), then approve again"
        )


def repositories_made(made: dict[str, list[str]], each: Callable[[str], str] = on_one_line) -> str:
    """What the draft does, said of the folders of :func:`made_repositories` and their
    files (each shown by ``each``): 'makes a git repository of …'."""
    folders = ", ".join(each(f"{folder}/") if folder else "the top folder" for folder in made)
    files = [name for names in made.values() for name in names]
    return (
        f"makes a git repository of {folders} ({listed(files, each)}: git takes a folder "
        "holding HEAD, objects/ and refs/ as a repository)"
    )


def control_warning(names: Sequence[str], each: Callable[[str], str] = on_one_line) -> str:
    """The warning for the control files among ``names`` ('' when there are none), each
    shown by ``each`` (see :func:`listed`)."""
    found = among_control_files(names)
    if not found:
        return ""
    return (
        f"The draft writes files that decide how Vis or other agents run this project: "
        f"{listed(found, each)}. Read them before you approve: once written, a trusted project "
        "needs `vis trust` again, and other agents (Claude Code's .claude/) read them as they are."
    )
