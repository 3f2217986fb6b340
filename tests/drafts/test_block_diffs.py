"""A block that enters a draft and then edits shows what it changed there, with diffs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions

from .conftest import make_repo

CODE = """
await draft_create("fix")
text = open("a.txt").read()
open("a.txt", "w").write(text.replace("two", "TWO"))
open("b.txt", "w").write("bee\\nand more\\n")
"""


@pytest.mark.parametrize("backend", ["worktree", "copy"])
async def test_a_block_that_enters_a_draft_diffs_what_it_changed_there(
    workspace: Path, tmp_path: Path, jail_off: None, backend: str
) -> None:
    """The block's file watch starts again in the draft as it is entered; the bytes before
    the block's edits are the live files the draft was made from (they were 'not kept: no
    diff')."""
    if backend == "worktree":
        make_repo(workspace)
    else:
        (workspace / "a.txt").write_text("one\ntwo\nthree\n")
        (workspace / "b.txt").write_text("bee\n")
    (workspace / "a.txt").write_text("one\ntwo\nthree\nmine\n")  # the person's, uncommitted
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": CODE}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(blocks.append, kinds=(BlockFinished,))
        ended = await session.submit("go")
        assert ended.status == "completed", ended.error
    finally:
        await host.close()
    changes = {change.path: change for change in blocks[0].files}
    assert set(changes) == {"a.txt", "b.txt"}, changes
    assert changes["a.txt"].note == "" and "-two\n+TWO\n three\n mine" in changes["a.txt"].diff
    assert (changes["a.txt"].added, changes["a.txt"].removed) == (1, 1)
    assert "+and more" in changes["b.txt"].diff and changes["b.txt"].note == ""
