"""A draft's git work runs in a thread: the event loop serves the session meanwhile."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from vis_core.drafts import Drafts
from vis_core.drafts.session import SessionDrafts
from vis_core.drafts.tools import draft_tools
from vis_core.model.draft import Draft


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

    async def approver(_draft: Draft, files: list[str], diff: str) -> str | None:
        asked.append((files, diff))
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
