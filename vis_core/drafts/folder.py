"""The ``copy`` backend: a draft of a folder outside git is a copy of it (blocks shared where
the filesystem can clone them) and a manifest of what each file held when the draft began."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from vis_core.drafts import files as draft_files
from vis_core.drafts import guarded
from vis_core.drafts.errors import DraftChanged, DraftConflict, DraftError
from vis_core.tools.beneath import Beneath

Manifest = dict[str, str]  # relative path -> content id


def walk(root: Path, skip: tuple[Path, ...] = ()) -> Iterator[str]:
    """Relative paths of the files and links beneath ``root`` (not into ``skip`` folders).
    Each folder is opened from the one above by descriptor (``os.fwalk``), never through a
    link: a folder the model's code swaps for a link meanwhile is not listed through it."""
    skipped = set()
    for folder in skip:
        with contextlib.suppress(OSError):
            skipped.add(_identity(os.stat(folder)))
    for folder, dirs, names, fd in os.fwalk(root):
        kept, links = [], []
        for name in dirs:  # fwalk's folders include links to folders, which it never enters
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                links.append(name)
            elif _identity(info) not in skipped:
                kept.append(name)
        dirs[:] = sorted(kept)
        inside = os.path.relpath(folder, root)
        for name in sorted(names + links):
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                continue  # gone meanwhile
            if stat.S_ISLNK(mode) or stat.S_ISREG(mode):
                yield os.path.normpath(os.path.join(inside, name))


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def manifest_of(root: Path, skip: tuple[Path, ...] = ()) -> Manifest:
    files = Beneath(root)
    found: Manifest = {}
    for name in walk(root, skip):
        content = draft_files.content_id(files, name)
        if content is not None:
            found[name] = content
    return found


def save_manifest(path: Path, manifest: Manifest) -> None:
    path.write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")


def load_manifest(path: Path) -> Manifest:
    return json.loads(path.read_text(encoding="utf-8"))


def create(workspace: Path, tree: Path, skip: tuple[Path, ...]) -> Manifest:
    """Copy ``workspace`` into ``tree``; returns the manifest of what was copied."""
    tree.mkdir(parents=True, exist_ok=True)
    live, budget = Beneath(workspace), draft_files.Budget()
    for name in walk(workspace, skip):  # all copied (or one refused) before any is hashed
        draft_files.clone_file(live, name, tree / name, budget=budget)
    return manifest_of(tree)


def changed(tree: Path, base: Manifest) -> list[str]:
    """Files of the draft that differ from the base (added, changed or removed)."""
    return sorted(changes(tree, base))


def changes(tree: Path, base: Manifest) -> dict[str, str | None]:
    """The draft's files that differ from the base, with what each holds (None: removed)."""
    now = manifest_of(tree)
    return {n: now.get(n) for n in set(now) | set(base) if now.get(n) != base.get(n)}


def state(found: dict[str, str | None]) -> str:
    """:func:`changes` as one text: what the person was shown of the draft."""
    return json.dumps(found, sort_keys=True)


def changed_since(shown: str, found: dict[str, str | None]) -> list[str]:
    """The files whose change differs between the :func:`state` ``shown`` and ``found``."""
    before: dict[str, str | None] = json.loads(shown)
    return sorted(n for n in set(before) | set(found) if before.get(n, "") != found.get(n, ""))


def sync(
    workspace: Path, tree: Path, base: Manifest, skip: tuple[Path, ...]
) -> tuple[Manifest, list[str]]:
    """Bring the live workspace's changes since the base into the draft; a file both changed
    differently is a conflict and nothing is copied. Returns the new base and the files."""
    live = manifest_of(workspace, skip)
    draft = manifest_of(tree)
    moved = sorted(n for n in set(live) | set(base) if live.get(n) != base.get(n))
    conflicted = [n for n in moved if draft.get(n) != base.get(n) and draft.get(n) != live.get(n)]
    if conflicted:
        raise DraftConflict("sync of the draft with the live workspace", conflicted)
    files, budget = Beneath(workspace), draft_files.Budget()
    for name in moved:
        if live.get(name) is None:
            (tree / name).unlink(missing_ok=True)
        elif draft.get(name) != live.get(name):
            draft_files.clone_file(files, name, tree / name, budget=budget)
    updated = dict(base)
    for name in moved:
        if live.get(name) is None:
            updated.pop(name, None)
        else:
            updated[name] = live[name]
    return updated, moved


def approve(
    workspace: Path, tree: Path, base: Manifest, reviewed: str | None = None, label: str = ""
) -> list[str]:
    """Copy the draft's changed files back; refuses (naming them, copying nothing) files the
    live workspace changed since the draft began, files in a ``.git`` or making a git
    repository (:func:`guarded.refuse_repository`), and, given
    ``reviewed`` (its :func:`state` when the person was shown it), a draft changed since."""
    draft = changes(tree, base)
    names = sorted(draft)
    if reviewed and state(draft) != reviewed:
        raise DraftChanged(label, changed_since(reviewed, draft))
    guarded.refuse_repository(label, names, (tree, workspace))
    copy, live = Beneath(tree), Beneath(workspace)
    gone = {name for name in names if draft[name] is None}
    refused = []
    for name in names:
        link = draft_files.link_on_the_way(workspace, name)  # never looked through
        if link is not None and link not in gone:
            refused.append(name)  # the draft holds a folder where you have a link
            continue
        now = None if link is not None else draft_files.content_id(live, name)
        if now != base.get(name) and now != draft[name]:
            refused.append(name)
    if refused:
        raise DraftConflict(
            "the live workspace changed these files since the draft began; approval would "
            "overwrite them",
            refused,
        )
    added = [  # in a folder the draft replaced with a file, files it never had
        f"{name}/{inside}"
        for name in names
        if draft[name] is not None and _is_folder(live, name)
        for inside in walk(workspace / name)
        if f"{name}/{inside}" not in draft
    ]
    if added:
        raise DraftConflict(
            "the draft replaced a folder with a file, and the live workspace has files in "
            "that folder the draft never had; approval would remove them",
            added,
        )
    budget = draft_files.Budget()
    writes: list[tuple[str, draft_files.Writer]] = [
        (name, None if draft[name] is None else _copier(copy, name, budget)) for name in names
    ]

    def unchanged() -> None:  # the model's processes are stopped from here on
        now = changes(tree, base)
        if reviewed and state(now) != reviewed:
            raise DraftChanged(label, changed_since(reviewed, now))

    try:  # all files or none: staged beside their targets, then renamed in
        draft_files.land_files(workspace, writes, check=unchanged)
    except draft_files.LandingFailed as exc:
        if isinstance(exc.__cause__, DraftChanged):
            raise exc.__cause__ from None
        raise _not_landed(exc) from exc
    return names


def _is_folder(files: Beneath, name: str) -> bool:
    try:
        return stat.S_ISDIR(files.stat(name, follow=False).st_mode)
    except OSError:
        return False


def _copier(source: Beneath, name: str, budget: draft_files.Budget) -> draft_files.Writer:
    def copy(temporary: Path) -> None:
        if not draft_files.clone_file(source, name, temporary, made=True, budget=budget):
            raise FileNotFoundError(f"{name} is no longer a file of the draft")

    return copy


def _not_landed(exc: draft_files.LandingFailed) -> DraftError:
    """Why approval wrote nothing, for the person."""
    if exc.problems:
        return DraftError(
            f"approval could not write {exc.name} ({exc}) and could not put back "
            + "; ".join(exc.problems)
            + ". Check those files; the draft is kept."
        )
    return DraftError(
        f"approval could not write {exc.name or 'the files'} ({exc.__cause__ or exc}); "
        "nothing in the workspace changed and the draft is kept. Fix that file's "
        "permissions and approve again."
    )
