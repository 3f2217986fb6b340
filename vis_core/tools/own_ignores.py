"""What a turn hides from its own listing with ignore rules: the files Git's listing (or Vis's
walk) leaves out, or shows, only because the turn itself made or changed a ``.gitignore``.

The workspace is listed by the ignore rules on disk now, so a block that writes a
``.gitignore`` naming itself, the files it makes and the ones it overwrites would keep them
out of its row and out of ``/undo``, and one that empties it would make the person's ignored
files look made by the turn (``/undo`` removed them). So a turn's listing also holds the files
its checkpoint listed, while they are there, and the ``.gitignore`` of every folder it lists
or enters, ignored or not (the rules themselves: one of ``*`` in a new folder ignores itself
too). Once one of those changed, the ``.gitignore`` files count as they were at the turn's
start (one made during the turn, at any depth, as none): the listing loses what they hid then
and gains the files made or changed during the turn that they showed and one the turn changed
hides now (in a Git repository, Git names the rule that hides each one). A rule outside the
workspace (``.git/info/exclude``, the global one) a jailed block cannot change.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from vis_core.system.git import GitFailed, run_git
from vis_core.tools.ignore import IGNORE_NAME as IGNORE_FILE
from vis_core.tools.ignore import file_states_of, git_toplevel, walk_judged_by


def kept_out(
    root: str, listed: dict[str, os.stat_result], before: Iterable[str]
) -> dict[str, os.stat_result]:
    """The files under ``root`` the listing ``listed`` left out that a turn's listing holds
    anyway: those of ``before`` (its checkpoint's) still there, and the ``.gitignore`` of
    each folder of either."""
    wanted = [rel for rel in before if rel not in listed]
    folders = {str(PurePosixPath(rel).parent) for rel in (*listed, *wanted)} | {"."}
    wanted += (IGNORE_FILE if f == "." else f"{f}/{IGNORE_FILE}" for f in folders)
    paths = sorted({os.path.join(root, rel) for rel in wanted if rel not in listed})
    cut = len(os.path.join(root, ""))
    return {path[cut:]: st for path, st in file_states_of(root, paths).items()}


def judged_by_start(
    root: str, rules_then: dict[str, str | None], listed: dict[str, os.stat_result], since_ns: int
) -> tuple[set[str], dict[str, os.stat_result]]:
    """The files under ``root`` the ignore rules of the turn's start show (each folder,
    relative, ``.`` the root, of ``rules_then`` judged by its ``.gitignore`` then: its text,
    None: none; one whose ``.gitignore`` changed since ``since_ns`` by none, as a new folder's
    at any depth; the others by theirs now), and of them those ``listed`` left out: only
    files changed since ``since_ns`` (their change time: the turn's), and in a Git repository
    only those one of the changed ``.gitignore`` files hides now (not Git's other rules)."""
    then = {root if f == "." else os.path.join(root, f): text for f, text in rules_then.items()}
    cut = len(os.path.join(root, ""))
    shown: set[str] = set()
    found: dict[str, os.stat_result] = {}
    for path, entry in walk_judged_by(root, then, since_ns):
        rel = path[cut:]
        shown.add(rel)
        if rel in listed:
            continue
        with contextlib.suppress(OSError):  # gone meanwhile
            st = entry.stat(follow_symlinks=False)
            if st.st_ctime_ns >= since_ns:
                found[rel] = st
    top = git_toplevel(root) if found else None
    if top is None:
        return shown, found
    changed = {os.path.join(folder, IGNORE_FILE) for folder in then}
    hidden = _hidden_by(Path(root), top, list(found), changed)
    return shown, found if hidden is None else {rel: found[rel] for rel in hidden}


def _hidden_by(root: Path, top: str, paths: list[str], rules: set[str]) -> set[str] | None:
    """Those of ``paths`` (relative to ``root``) Git ignores by a pattern of one of the files
    ``rules`` (absolute paths); None when Git cannot tell (then all are kept)."""
    feed = b"".join(os.fsencode(p) + b"\0" for p in paths)
    try:
        done = run_git(["check-ignore", "-v", "-z", "--stdin"], root, feed=feed)
    except GitFailed:
        return None
    if done.returncode not in (0, 1):
        return None
    fields = done.stdout.split(b"\0")
    hidden = set()
    for at in range(0, len(fields) - 3, 4):  # source, line, pattern, path
        source, path = os.fsdecode(fields[at]), os.fsdecode(fields[at + 3])
        if os.path.normpath(os.path.join(top, source)) in rules:
            hidden.add(path)
    return hidden
