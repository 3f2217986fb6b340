"""A draft's git work runs in a thread: the event loop serves the session meanwhile."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from vis_core.drafts import Drafts
from vis_core.drafts.session import SessionDrafts
from vis_core.drafts.tools import draft_tools
from vis_core.model.draft import Draft, DraftReview

from .conftest import git


async def test_the_loop_serves_while_git_reviews_and_approves_a_draft(
    repo: Path, drafts: Drafts
) -> None:
    """``draft_approve`` ran ``git add -A`` and ``git diff`` on the event loop: the block's
    other calls, the app and every other session waited for git. Here git waits on a pipe
    planted as a ``.gitignore`` until a coroutine on the loop opens its other end, so the
    approval ends only when the loop serves while git runs (else git times out)."""
    session = SessionDrafts(drafts, "s1", repo, repo)
    draft = await session.create("w")
    tree = Path(draft.root)
    (tree / "a.txt").write_text("changed\n")
    (tree / "sub").mkdir()
    (tree / "sub" / "new.txt").write_text("new\n")
    os.mkfifo(tree / "sub" / ".gitignore")
    opened = 0

    async def open_the_pipe() -> None:
        nonlocal opened
        while True:
            try:
                fd = os.open(tree / "sub" / ".gitignore", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                await asyncio.sleep(0.01)
                continue
            os.close(fd)  # git reads an empty file and goes on
            opened += 1

    asked: list[tuple[list[str], str]] = []

    async def approver(_draft: Draft, review: DraftReview) -> str | None:
        asked.append((review.files, review.diff))
        return None

    approve = {tool.name: tool.fn for tool in draft_tools(session, approver)}["draft_approve"]
    opener = asyncio.create_task(open_the_pipe())
    try:
        result = await approve("from the draft")
    finally:
        opener.cancel()
    assert opened >= 2  # git waited for the loop in the review and in the approval
    [(files, diff)] = asked
    assert files == ["a.txt", "sub/new.txt"] and "+changed" in diff
    assert sorted(result["files"]) == ["a.txt", "sub/new.txt"]
    assert (repo / "a.txt").read_text() == "changed\n" and (repo / "sub" / "new.txt").exists()


async def test_a_sessions_draft_steps_run_one_at_a_time(repo: Path, drafts: Drafts) -> None:
    """``/draft`` counts the draft's files for the status bar (``git add -A``, which holds
    the draft's index lock) as it opens the draft screen; a sync pressed meanwhile ran its
    git beside it, and one of them failed on the lock ("index.lock: File exists"): the person
    saw the sync refused. A session's draft steps now run one after the other."""
    session = SessionDrafts(drafts, "s1", repo, repo)
    draft = await session.create("w")
    (Path(draft.root) / "a.txt").write_text("changed\n")
    (repo / "c.txt").write_text("main's\n")  # main moves on: the sync brings it in
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c")
    counting, go_on, synced = threading.Event(), threading.Event(), []
    count, sync = drafts.changed_files, drafts.sync

    def held_count(draft: Draft) -> list[str]:
        counting.set()
        go_on.wait(20)
        return count(draft)

    def watched_sync(*args: Any) -> list[str]:
        synced.append("started")
        return sync(*args)

    drafts.changed_files = held_count  # type: ignore[method-assign]
    drafts.sync = watched_sync  # type: ignore[method-assign]
    counted = asyncio.create_task(session.changed_files())
    assert await asyncio.to_thread(counting.wait, 20)
    syncing = asyncio.create_task(session.sync())
    await asyncio.sleep(0.2)  # the sync's chance to start beside the count
    assert synced == []
    go_on.set()
    assert await counted == ["a.txt"]
    assert await syncing == ["c.txt"] and synced == ["started"]
