"""Where approval is refused, which side replaced a folder with a file (or a file with a
folder), said for the person: "the draft replaced the folder d with a file"."""

from __future__ import annotations

import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from vis_core.drafts.files import link_on_the_way
from vis_core.drafts.gitrun import paths as git_paths
from vis_core.tools.beneath import Beneath

# What each of some paths is ("file", "link", "folder"), those where something is
Kinds = Callable[[Sequence[str]], dict[str, str]]
FOLDER = "folder"
LOOKED_AT = 20  # refused files whose folders are looked at
_SET_ASIDE = re.compile(r"~[0-9a-f]{40}(?:[0-9a-f]{24})?$")  # where merge-tree put a file aside
_MODES = {"040000": FOLDER, "160000": FOLDER, "120000": "link"}


def in_tree(cwd: Path, tree: str) -> Kinds:
    """What paths are in a git tree (or commit), read by one ``git ls-tree``."""

    def kinds(paths: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for line in git_paths(["ls-tree", "-t", "-z", "--full-tree", tree, "--", *paths], cwd):
            meta, name = line.split("\t", 1)
            found[name] = _MODES.get(meta.split(" ", 1)[0], "file")
        return found

    return kinds


def in_folder(top: Path) -> Kinds:
    """What paths are in a live folder (a link is a link, never followed, nor one on the
    way: nothing lies beneath it)."""
    files = Beneath(top)

    def kinds(paths: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for path in paths:
            if link_on_the_way(top, path) is not None:
                continue
            try:
                mode = files.stat(path, follow=False).st_mode
            except (FileNotFoundError, NotADirectoryError):
                continue
            found[path] = FOLDER if stat.S_ISDIR(mode) else "link" if stat.S_ISLNK(mode) else "file"
        return found

    return kinds


def replacements(
    names: Sequence[str], base: Kinds, sides: Sequence[tuple[str, Kinds, str]]
) -> list[str]:
    """For each of ``names`` (the first :data:`LOOKED_AT`), or the folder above one nearest
    the top, that is a folder in ``base`` and not one on a side (or the other way): "WHO
    replaced the folder P with a fileTAIL", for each ``(WHO, kinds, TAIL)`` of ``sides``."""
    looked = set_aside(names)[:LOOKED_AT]
    if not looked:
        return []
    ways = [
        ["/".join(PurePosixPath(n).parts[: i + 1]) for i in range(n.count("/") + 1)] for n in looked
    ]
    every = sorted({path for way in ways for path in way})
    before = base(every)
    after = [(who, kinds(every), tail) for who, kinds, tail in sides]
    said: dict[str, list[str]] = {}
    for way in ways:
        for path in way:
            old = before.get(path)
            found = [
                f"{who} replaced the {old} {path} with a {new}{tail}"
                for who, now, tail in after
                if old is not None
                and (new := now.get(path)) is not None
                and (old == FOLDER) != (new == FOLDER)
            ]
            if found:
                said.setdefault(path, found)
                break
    return [sentence for found in said.values() for sentence in found]


def set_aside(names: Sequence[str]) -> list[str]:
    """``names`` as the person knows them: a file ``git merge-tree`` set aside as
    ``PATH~COMMIT`` (a folder and a file met there) is named ``PATH``."""
    return sorted({_SET_ASIDE.sub("", name) for name in names})
