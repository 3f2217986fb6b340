"""A draft as data: the isolated working copy a session works in until approved or discarded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DraftBackend(StrEnum):
    """How a draft holds its files."""

    WORKTREE = "worktree"  # a git worktree on branch vis/draft/<label>
    COPY = "copy"  # a copy of a folder outside git


@dataclass(frozen=True)
class Draft:
    """One draft: where it lives, what it started from and where approval merges it."""

    id: str
    label: str
    backend: DraftBackend
    root: str  # the draft's copy of the workspace: the session's workspace while in it
    workspace: str  # the live workspace the draft was made from
    repo_root: str | None  # the live repository's top folder (worktree backend)
    base: str  # the commit the draft started from (worktree) or its manifest's name (copy)
    branch: str | None
    target_branch: str | None
    session_id: str | None
    created: float


class DraftAction(StrEnum):
    """What happened to a session's draft (the ``DraftChanged`` event)."""

    ENTERED = "entered"
    SYNCED = "synced"
    APPROVED = "approved"
    DISCARDED = "discarded"
    RESUMED = "resumed"  # a resumed session is back in its draft


@dataclass(frozen=True)
class DraftReview:
    """What approving a draft would bring, as the person is shown it."""

    files: list[str]  # the files it changes
    diff: str  # git: the change approval's commit makes; a copy: the files, a line each
    state: str  # the draft's content read (git: its tree; a copy: its files' ids): approval
    # checks it ('': no draft)
    stat: tuple[str, ...] = ()  # a line per file, made by Vis: its name on one line, escaped,
    # and what changed (git's counts of lines added and removed; a copy: new, changed, removed)


@dataclass(frozen=True)
class DraftView:
    """What a front end shows of the session's draft, with its actions (``/draft ACTION``)."""

    label: str
    summary: str  # backend, root, target branch and how many files differ
    diff: str  # the diff against the draft's base ('' when nothing changed yet)
    actions: tuple[str, ...] = ("approve", "sync", "discard")
    note: str = ""  # why it is shown again (an approval refused: what changed since)
    message: str = ""  # the commit message that approval was given, kept for the next one
