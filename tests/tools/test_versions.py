"""File versions: texts held within a budget across files, and what a patch does against a
version whose text is no longer held."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from vis_core.store import Store
from vis_core.store.file_versions import SessionFileVersions
from vis_core.tools import ToolContext
from vis_core.tools.edit import patch_file
from vis_core.tools.files import cat_file
from vis_core.tools.patching import PatchError
from vis_core.tools.search import search
from vis_core.tools.versions import FileVersions

BUDGET = 1 << 20  # characters: large beside what else a read allocates, small to write


def edit(start: int, end: int, text: str) -> dict:
    return {"start": start, "end": end, "text": text}


def lines(tag: str, count: int) -> str:
    return "".join(f"{tag}{i:03}\n" for i in range(1, count + 1))


async def test_version_texts_are_held_within_a_budget_across_files(
    workspace: Path, tmp_path: Path
) -> None:
    ctx = ToolContext(workspace, "s", tmp_path / "o", versions=FileVersions(budget=2_000))
    for name in "abcde":
        (workspace / f"{name}.txt").write_text(lines(name, 100))  # 500 characters each
        assert cat_file(ctx, f"{name}.txt").startswith(f"{name}.txt @1\n")
    assert ctx.versions.kept_chars() <= 2_000
    # the newest texts are held: an outside change is moved past
    (workspace / "e.txt").write_text("top\n" + lines("e", 100))
    moved = await patch_file(ctx, "e.txt", 1, [edit(5, 5, "E\n")])
    assert moved.rebased_from == 1 and (workspace / "e.txt").read_text().splitlines()[5] == "E"
    # the oldest is not; as long as the file is still that version, a patch applies
    await patch_file(ctx, "b.txt", 1, [edit(5, 5, "B\n")])
    assert (workspace / "b.txt").read_text().splitlines()[4] == "B"
    # changed since: a clear refusal, nothing written
    changed = "top\n" + lines("a", 100)
    (workspace / "a.txt").write_text(changed)
    with pytest.raises(
        PatchError,
        match=r"a.txt changed since you read @1 \(it is @2 now\), and the text of @1 is no "
        r"longer held.*Read it again with cat\('a.txt'\)",
    ):
        await patch_file(ctx, "a.txt", 1, [edit(5, 5, "A\n")])
    assert (workspace / "a.txt").read_text() == changed
    await patch_file(ctx, "a.txt", 2, [edit(6, 6, "A\n")])  # the version named there works
    assert (workspace / "a.txt").read_text().splitlines()[5] == "A"


async def test_reading_a_growing_file_holds_a_bounded_amount(
    workspace: Path, tmp_path: Path
) -> None:
    ctx = ToolContext(workspace, "s", tmp_path / "o", versions=FileVersions(budget=BUDGET))
    big = workspace / "huge.txt"
    big.write_text("x" * 99 + "\n")
    with open(big, "a") as out:
        out.truncate(0)
        out.write(("y" * 99 + "\n") * (BUDGET // 400))  # a quarter of the budget
    tracemalloc.start()
    try:
        for i in range(12):  # three budgets' worth of versions
            with open(big, "a") as out:
                out.write(f"line {i}\n")
            assert f"@{i + 1}" in cat_file(ctx, "huge.txt", 1, 1).split("\n")[0]
            assert f"@{i + 1}" in (await search(ctx, f"line {i}", "huge.txt")).split("\n")[0]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    await ctx.close()
    assert held < BUDGET * 1.5


def test_a_file_whose_name_is_not_utf8_is_numbered_in_the_store(
    workspace: Path, tmp_path: Path
) -> None:
    """``cat("data\\xff.csv")``, the name as ``ls`` shows it, failed in every session with
    "UnicodeEncodeError: ... surrogates not allowed": the store's row of its versions is keyed
    by the path, and SQLite takes UTF-8 only. A later session numbers on from that row."""
    name, file = "data\\xff.csv", workspace / os.fsdecode(b"data\xff.csv")
    file.write_text("a,b\n")
    with Store(tmp_path / "vis.db") as store:
        sid = store.create_session(str(workspace), str(workspace)).id

        def read() -> str:
            versions = FileVersions(log=SessionFileVersions(store, sid))
            return cat_file(ToolContext(workspace, sid, tmp_path / "o", versions=versions), name)

        assert read().startswith(f"{name} @1\n1: a,b")
        file.write_text("c,d\n")
        assert read().startswith(f"{name} @2\n1: c,d")  # as a resumed session reads it
