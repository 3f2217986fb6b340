"""cat and ls: headers with versions, numbered lines, paging, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.tools import ToolContext
from vis_core.tools.context import OutsideWorkspace
from vis_core.tools.files import cat_file, list_folder


def test_cat_numbers_lines_under_a_versioned_header(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    out = cat_file(ctx, "a.py")
    assert out == "a.py @1\n1: x = 1\n2: y = 2"
    assert cat_file(ctx, "@a.py") == out  # a leading @ is stripped; same content, same version
    (workspace / "a.py").write_text("x = 1\ny = 3\n")
    assert cat_file(ctx, str(workspace / "a.py")).startswith("a.py @2\n")


def test_cat_range_and_paging(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    part = cat_file(ctx, "big.txt", 10, 12)
    assert part.splitlines() == [
        "big.txt @1 · lines 10–12 of 3,000",
        "10: row 10",
        "11: row 11",
        "12: row 12",
    ]
    page = cat_file(ctx, "big.txt")
    assert "   1: row 1" in page and "2000: row 2000" in page and "row 2001" not in page
    assert page.endswith("read on with cat('big.txt', start=2001)]")
    assert "row 3000" in cat_file(ctx, "big.txt", start=2001)


def test_cat_refusals(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "img.bin").write_bytes(b"\x89PNG\x00\x01")
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    (workspace / "d").mkdir()
    with pytest.raises(ValueError, match="img.bin is a binary file"):
        cat_file(ctx, "img.bin")
    with pytest.raises(ValueError, match="not UTF-8 text"):
        cat_file(ctx, "latin.txt")
    with pytest.raises(IsADirectoryError, match=r"d is a directory.*ls\('d'\)"):
        cat_file(ctx, "d")
    with pytest.raises(FileNotFoundError, match="no file missing.py"):
        cat_file(ctx, "missing.py")
    (workspace / "s.txt").write_text("a\n")
    with pytest.raises(ValueError, match="has 1 lines; start=5 is past its end"):
        cat_file(ctx, "s.txt", 5)
    with pytest.raises(ValueError, match="lines start at 1"):
        cat_file(ctx, "s.txt", 0)
    with pytest.raises(ValueError, match=r"cat: the path 's\\x00.txt' holds a NUL character"):
        cat_file(ctx, "s\0.txt")  # was "no file s\0.txt" (the NUL drawn as nothing)


def test_jail_refuses_paths_outside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    jailed = ToolContext(workspace, "s", tmp_path / "out", jail=True)
    with pytest.raises(OutsideWorkspace, match="outside the workspace"):
        cat_file(jailed, str(outside))
    with pytest.raises(OutsideWorkspace):
        cat_file(jailed, "../secret.txt")
    (workspace / "link").symlink_to(outside)
    with pytest.raises(OutsideWorkspace):
        cat_file(jailed, "link")
    free = ToolContext(workspace, "s", tmp_path / "out")
    assert "top secret" in cat_file(free, "../secret.txt")


def test_ls_lists_folders_first_and_skips_ignored(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "m.py").write_text("x\n")
    (workspace / "src" / "a.py").write_text("hello\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("o")
    (workspace / ".gitignore").write_text("build/\n")
    out = list_folder(ctx, ".", 3)
    assert out.splitlines() == [
        "./",
        "  build/  (ignored, not listed)",
        "  src/",
        "    pkg/",
        "      m.py  2 B",
        "    a.py  6 B",
        "  .gitignore  7 B",
    ]
    assert list_folder(ctx, "src").splitlines() == ["src/", "  pkg/", "  a.py  6 B"]
    with pytest.raises(FileNotFoundError, match="no file or folder nope"):
        list_folder(ctx, "nope")


def test_ls_of_a_subfolder_honours_the_root_gitignore(ctx: ToolContext, workspace: Path) -> None:
    """``ls("web", depth=3)`` listed and counted ``node_modules/leftpad/index.js`` that the
    root ``.gitignore`` ignores (``ls(".")`` and ``grep`` left it out): the rules of the
    folders above the one listed apply as Git applies them."""
    (workspace / ".gitignore").write_text("node_modules/\n__pycache__/\n")
    (workspace / "web" / "node_modules" / "leftpad").mkdir(parents=True)
    (workspace / "web" / "node_modules" / "leftpad" / "index.js").write_text("x\n")
    (workspace / "web" / "app.js").write_text("y\n")
    (workspace / "web" / "lib" / "__pycache__").mkdir(parents=True)
    out = list_folder(ctx, "web", 3)
    assert out.splitlines() == [
        "web/",
        "  lib/",
        "    __pycache__/  (ignored, not listed)",
        "  node_modules/  (ignored, not listed)",
        "  app.js  2 B",
    ]
    assert list_folder(ctx, "web/lib", 2).splitlines() == [
        "web/lib/",
        "  __pycache__/  (ignored, not listed)",
    ]
    with pytest.raises(ValueError, match="depth"):
        list_folder(ctx, ".", 0)
