"""`cat` and `patch` through an editor's buffers (`vis acp`): only checked, link-free paths."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from vis_core.tools.context import ToolContext
from vis_core.tools.edit import patch_file
from vis_core.tools.files import cat_file


class Editor:
    """An editor holding unsaved text for some files; records what it was asked."""

    def __init__(self, buffers: dict[Path, str]) -> None:
        self.buffers = buffers
        self.asked: list[Path] = []
        self.saved: dict[Path, str] = {}

    def quiet(self) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext()

    def read_text(self, path: Path) -> str | None:
        self.asked.append(path)
        return self.buffers.get(path)

    def write_text(self, path: Path, text: str) -> bool:
        self.saved[path] = text
        path.write_text(text)
        return True


def _context(workspace: Path, tmp_path: Path, editor: Editor):
    ctx = ToolContext(workspace, "s1", tmp_path / "out", jail=True)
    ctx.use_buffers(editor)
    return ctx


def test_cat_reads_the_editors_buffer_but_never_through_a_link(workspace, tmp_path):
    (workspace / "a.txt").write_text("disk\n")
    (workspace / "via").symlink_to(workspace / "a.txt")
    editor = Editor({workspace / "a.txt": "unsaved\n"})
    ctx = _context(workspace, tmp_path, editor)
    assert "unsaved" in str(cat_file(ctx, "a.txt"))
    assert "disk" in str(cat_file(ctx, "via"))  # a link on the way: disk, beneath the workspace
    assert editor.asked == [workspace / "a.txt"]


def test_a_link_out_of_the_workspace_never_reaches_the_editor(workspace, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n")
    (workspace / "out").symlink_to(outside)
    editor = Editor({})
    ctx = _context(workspace, tmp_path, editor)
    with pytest.raises(PermissionError):
        cat_file(ctx, "out")
    assert editor.asked == []


async def test_patch_writes_through_the_editor_and_the_jail_still_guards(workspace, tmp_path):
    (workspace / "a.txt").write_text("one\n")
    editor = Editor({})
    ctx = _context(workspace, tmp_path, editor)
    cat_file(ctx, "a.txt")
    await patch_file(ctx, "a.txt", 1, [{"start": 1, "end": 1, "text": "two\n"}])
    assert editor.saved == {workspace / "a.txt": "two\n"}
    (workspace / "vis.yml").write_text("toggles: {}\n")
    cat_file(ctx, "vis.yml")
    with pytest.raises(PermissionError):
        await patch_file(ctx, "vis.yml", 1, [{"start": 1, "end": 1, "text": "x: 1\n"}])
    assert list(editor.saved) == [workspace / "a.txt"]
