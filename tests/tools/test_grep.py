"""grep: grouped, versioned, bounded results; ripgrep and the Python path print the same text."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from big_index import indexed

from vis_core.tools import ToolContext
from vis_core.tools.files import cat_file
from vis_core.tools.ignore import MAX_LISTED
from vis_core.tools.search import search

HAS_RG = shutil.which("rg") is not None
ENGINES = ["python", pytest.param("rg", marks=pytest.mark.skipif(not HAS_RG, reason="no rg"))]


def make_tree(root: Path) -> None:
    files = {
        "src/app.py": "import os\n\ndef Handler():\n    return os.getcwd()  # TODO\n",
        "src/util.py": "def helper():\n    pass\n# todo: later\n",
        "src/deep/nested/mod.py": "TODO = 1\nprint(TODO)\n",
        "docs/readme.md": "A todo list\nTodoList item\n",
        "build/gen.py": "TODO generated\n",
        "logs/x.log": "TODO log\n",
        ".hidden/secret.py": "TODO hidden\n",
        ".env": "TODO=1\n",
        "notes.txt": "café TODO ünïcode\r\nsecond line\r\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    (root / "bin.dat").write_bytes(b"TODO\x00\x01\x02")
    (root / ".gitignore").write_text("build/\n*.log\n")


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


CASES = [
    dict(query="todo"),
    dict(query="TODO"),
    dict(query="todo", case="sensitive"),
    dict(query="TODO", case="ignore", context=1),
    dict(query=r"def \w+\(", include="*.py"),
    dict(query="todo", exclude="src"),
    dict(query="todo", include="src/*.py"),
    dict(query="todo", paths=["src", "notes.txt"]),
    dict(query="todo", hidden=True),
    dict(query="TODO", word=True),
    dict(query="os.getcwd()", literal=True),
    dict(query="todo", limit=2),
    dict(query="todo", limit=2, offset=2),
    dict(query="zzz-nothing"),
    dict(query=r"(?<=def )helper"),  # look-behind: rg rejects it, the Python path answers
]


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
async def test_rg_and_python_print_identical_text(
    workspace: Path, tmp_path: Path, git: bool
) -> None:
    if not HAS_RG:
        pytest.skip("ripgrep (rg) is not installed")
    make_tree(workspace)
    if git:
        git_init(workspace)
    for case in CASES:
        args = dict(case)
        query = args.pop("query")
        paths = args.pop("paths", ".")
        a = await search(
            ToolContext(workspace, "a", tmp_path / "o"), query, paths, engine="rg", **args
        )
        b = await search(
            ToolContext(workspace, "b", tmp_path / "o"), query, paths, engine="python", **args
        )
        assert a == b, f"{case}\n--- rg ---\n{a}\n--- python ---\n{b}"


@pytest.mark.parametrize("engine", ENGINES)
async def test_results_are_grouped_and_filtered(
    ctx: ToolContext, workspace: Path, engine: str
) -> None:
    make_tree(workspace)
    out = await search(ctx, "todo", engine=engine)
    assert out.splitlines()[:2] == ["docs/readme.md @1", "1: A todo list"]
    assert "notes.txt @1\n1: café TODO ünïcode\n" in out  # CRLF shown without the \r
    assert "build/gen.py" not in out and "x.log" not in out  # .gitignore respected
    assert ".hidden" not in out and ".env" not in out and "bin.dat" not in out
    assert out.endswith("7 matching lines in 5 files.")
    hidden = await search(ctx, "todo", hidden=True, engine=engine)
    assert ".hidden/secret.py @1" in hidden and ".env @1" in hidden


@pytest.mark.parametrize("engine", ENGINES)
async def test_versions_and_context_lines(ctx: ToolContext, workspace: Path, engine: str) -> None:
    make_tree(workspace)
    cat_file(ctx, "src/util.py")
    (workspace / "src/util.py").write_text("def helper():\n    pass\n# todo: later\n# more\n")
    out = await search(ctx, "later", paths="src/util.py", context=1, engine=engine)
    assert out.splitlines() == [
        "src/util.py @2",
        "2-     pass",
        "3: # todo: later",
        "4- # more",
        "",
        "1 matching line in 1 file.",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_page_starts_inside_one_file_and_ends_inside_the_next(
    ctx: ToolContext, workspace: Path, engine: str
) -> None:
    (workspace / "a.txt").write_text("hit a1\nhit a2\nhit a3\n")
    (workspace / "b.txt").write_text("hit b1\nhit b2\nhit b3\n")
    out = await search(ctx, "hit", offset=2, limit=2, engine=engine)
    assert out.splitlines()[:5] == ["a.txt @1", "3: hit a3", "", "b.txt @1", "1: hit b1"]
    assert out.splitlines()[-1].startswith("Showing matches 3–4 of 6 matching lines in 2 files.")


@pytest.mark.parametrize("engine", ENGINES)
async def test_paging_note(ctx: ToolContext, workspace: Path, engine: str) -> None:
    (workspace / "many.txt").write_text("".join(f"hit {i}\n" for i in range(1, 251)))
    first = await search(ctx, "hit", engine=engine)
    assert "100: hit 100" in first and "hit 101" not in first
    assert first.splitlines()[-1].startswith(
        "Showing matches 1–100 of 250 matching lines in 1 file."
    )
    assert "150 more left out: call grep('hit', offset=100, …) for the next page" in first
    last = await search(ctx, "hit", offset=200, engine=engine)
    assert "201: hit 201" in last and "250: hit 250" in last and "hit 200\n" not in last
    assert last.splitlines()[-1] == "Showing matches 201–250 of 250 matching lines in 1 file."
    with pytest.raises(ValueError, match="offset=250 is past the last of 250 matches"):
        await search(ctx, "hit", offset=250, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
async def test_bad_input(ctx: ToolContext, workspace: Path, engine: str) -> None:
    with pytest.raises(ValueError, match=r"invalid regex 'foo\(': missing \).*literal=True"):
        await search(ctx, "foo(", engine=engine)
    with pytest.raises(FileNotFoundError, match="no file or folder nowhere"):
        await search(ctx, "x", "nowhere", engine=engine)
    with pytest.raises(ValueError, match="case must be one of smart, sensitive, ignore"):
        await search(ctx, "x", case="upper", engine=engine)
    with pytest.raises(ValueError, match="limit=0 is out of range"):
        await search(ctx, "x", limit=0, engine=engine)
    assert await search(ctx, "foo(", literal=True, engine=engine) == "No matches for 'foo(' in '.'."


async def test_long_output_is_truncated_with_full_text_saved(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "wide.txt").write_text("".join(f"hit {'x' * 400} {i}\n" for i in range(1000)))
    out = await search(ctx, "hit", limit=1000)
    assert "[Output truncated: showing the first" in out
    saved = Path(out.rsplit("Full output saved to: ", 1)[1].rstrip("]"))
    assert saved.parent == ctx.output_dir
    assert saved.read_text().endswith("1,000 matching lines in 1 file.")


@pytest.mark.skipif(not HAS_RG, reason="ripgrep (rg) is not installed")
async def test_rg_path_really_counts(ctx: ToolContext, workspace: Path) -> None:
    from vis_core.tools.search import Root, count_rg, make_query

    make_tree(workspace)
    query = make_query(
        "todo", literal=False, case="smart", word=False, include=None, exclude=None, hidden=False
    )
    counts = await count_rg(ctx, shutil.which("rg") or "rg", [Root(workspace, False)], query)
    assert counts == {
        str(workspace / "docs/readme.md"): 2,
        str(workspace / "notes.txt"): 1,
        str(workspace / "src/app.py"): 1,
        str(workspace / "src/deep/nested/mod.py"): 2,
        str(workspace / "src/util.py"): 1,
    }
    lookbehind = make_query(
        "(?<=x)y",
        literal=False,
        case="smart",
        word=False,
        include=None,
        exclude=None,
        hidden=False,
    )
    assert await count_rg(ctx, "rg", [Root(workspace, False)], lookbehind) is None


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_file_name_with_a_line_break_is_searched_like_any(
    ctx: ToolContext, workspace: Path, engine: str
) -> None:
    """ripgrep's output was split at every newline, one inside a file name too: a workspace
    holding ``nl\\nname.txt`` failed every search ('ripgrep failed: name.txt: No such file')."""
    (workspace / "nl\nname.txt").write_text("a needle\n")
    (workspace / "plain.txt").write_text("one needle\nanother needle\n")
    out = await search(ctx, "needle", engine=engine)
    assert out.endswith("3 matching lines in 2 files."), out
    assert "1: a needle" in out and "2: another needle" in out


@pytest.mark.parametrize("engine", ENGINES)
async def test_anchors_match_the_lines_of_a_crlf_file(
    ctx: ToolContext, workspace: Path, engine: str
) -> None:
    (workspace / "crlf.txt").write_bytes(b"line1\r\nline2\r\nline3\r\n")
    out = await search(ctx, "^line3$", "crlf.txt", engine=engine)
    assert out.splitlines()[:2] == ["crlf.txt @1", "3: line3"]
    assert out.endswith("1 matching line in 1 file.")


async def test_a_folder_too_big_to_list_is_not_searched_and_the_result_says_so(
    ctx: ToolContext, workspace: Path
) -> None:
    """The Python search listed every file Git named: an index (a checkout's, or one a block
    made) naming millions of paths took Vis's memory. Past the bound of a checkpoint's
    listing the folder is neither listed nor searched, the others are, and the result says
    which one was cut."""
    indexed(workspace, paths=MAX_LISTED + 1)
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("a needle\n")
    out = await search(ctx, "needle", ["src", "."], engine="python")
    assert out == (
        "src/a.txt @1\n1: a needle\n\n1 matching line in 1 file.\n\nNot searched: '.', which "
        "holds more than 300,000 files or 64 MiB of file names, more than grep lists to search "
        "without ripgrep; search folders inside it with paths=."
    )


@pytest.mark.parametrize(
    ("query", "literal", "ignored"),
    [
        ("todo", False, True),
        ("Todo", False, False),
        (r"\Wtodo\S", False, True),  # an escape's letter is no uppercase the person typed
        (r"\\Todo", False, False),  # an escaped backslash, then an uppercase letter
        (r"\Wtodo", True, False),  # literal: every letter counts
    ],
)
def test_smart_case_ignores_case_unless_the_query_spells_an_uppercase_letter(
    query: str, literal: bool, ignored: bool
) -> None:
    from vis_core.tools.search import make_query

    spec = make_query(
        query, literal=literal, case="smart", word=False, include=None, exclude=None, hidden=False
    )
    assert spec.ignore_case is ignored
