"""Files a draft's approval never writes (a ``.git``: the person's git would run what its
config names) and files it writes only with a warning (a project's control files)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

from vis_core.drafts.errors import DraftError
from vis_core.model.lines import on_one_line
from vis_core.system.jail import PROTECTED_NAMES, PROTECTED_PREFIX

SHOWN = 20  # names a refusal or a warning lists


def repository_files(names: Sequence[str]) -> list[str]:
    """Those of ``names`` in a ``.git`` (a folder or a file, at any depth), compared
    case-insensitively: a case-folding filesystem takes ``.GIT`` for ``.git``."""
    return [n for n in names if any(p.casefold() == ".git" for p in PurePosixPath(n).parts)]


def among_control_files(names: Sequence[str]) -> list[str]:
    """Those of ``names`` the jail keeps read-only besides ``.git`` (``.vis/``, ``vis.yml``,
    ``.env*``, ``.agents/``, ``.claude/``, at any depth, case-insensitively): what decides
    how Vis, or another agent, runs the project."""
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


def refuse_repository(label: str, names: Sequence[str]) -> None:
    """:class:`DraftError` when the draft writes into a ``.git``: nothing is approved."""
    found = repository_files(names)
    if found:
        raise DraftError(
            f"draft {label} writes into a .git ({listed(found)}): git run in your workspace "
            "would read that configuration and hooks, which can run programs "
            "(core.fsmonitor, hooks). Approval never writes a .git, so nothing was approved. "
            "Remove those files from the draft (or discard it), then approve again"
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
