"""File names that are not UTF-8 are shown as ``\\xNN`` and can be read and patched by it."""

from __future__ import annotations

import os
from pathlib import Path

from vis_core.tools import ToolContext
from vis_core.tools.edit import patch_file
from vis_core.tools.files import cat_file, list_folder


async def test_ls_cat_grep_and_patch_work_with_a_non_utf8_name(
    ctx: ToolContext, workspace: Path, tools: dict
) -> None:
    (workspace / os.fsdecode(b"bad\xff.txt")).write_bytes(b"one\n")
    (workspace / os.fsdecode(b"dir\xfe")).mkdir()
    (workspace / os.fsdecode(b"dir\xfe") / "x.txt").write_text("needle\n")
    listing = list_folder(ctx, ".", 2)
    assert "bad\\xff.txt" in listing and "dir\\xfe/" in listing
    listing.encode("utf-8")  # no surrogates left: it crosses into the sandbox as JSON
    assert str(cat_file(ctx, "bad\\xff.txt")).startswith("bad\\xff.txt @1\n")
    found = await tools["grep"].fn("needle")
    assert "dir\\xfe/x.txt" in str(found)
    result = await patch_file(ctx, "bad\\xff.txt", 1, [{"start": 1, "end": 1, "text": "two\n"}])
    assert result.path == "bad\\xff.txt"
    assert (workspace / os.fsdecode(b"bad\xff.txt")).read_bytes() == b"two\n"
