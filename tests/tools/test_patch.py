"""patch: line-addressed edits, rebase after outside changes, refusals, creation, the queue."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from vis_core.tools import ToolContext
from vis_core.tools.edit import patch_file
from vis_core.tools.files import cat_file
from vis_core.tools.patching import PatchError, syntax_error

SOURCE = "".join(f"line{i} = {i}\n" for i in range(1, 11))


def edit(start: int, end: int, text: str) -> dict:
    return {"start": start, "end": end, "text": text}


@pytest.fixture
def py(ctx: ToolContext, workspace: Path) -> Path:
    path = workspace / "m.py"
    path.write_text(SOURCE)
    assert cat_file(ctx, "m.py").startswith("m.py @1\n")
    return path


async def test_replace_insert_delete_in_one_call(ctx: ToolContext, py: Path) -> None:
    result = await patch_file(
        ctx,
        "m.py",
        1,
        [
            edit(2, 3, "two = 2\n"),
            edit(5, 4, "inserted = 0\n"),
            edit(9, 9, ""),
            edit(11, 10, "end = 1"),
        ],
    )
    lines = py.read_text().splitlines()
    assert lines == [
        "line1 = 1",
        "two = 2",
        "line4 = 4",
        "inserted = 0",
        "line5 = 5",
        "line6 = 6",
        "line7 = 7",
        "line8 = 8",
        "line10 = 10",
        "end = 1",
    ]
    assert py.read_text().endswith("end = 1\n")
    assert (result.path, result.version, result.added, result.removed) == ("m.py", 2, 3, 3)
    assert "-line2 = 2\n-line3 = 3\n+two = 2\n" in result.diff
    assert str(result).startswith("patched m.py @2: +3 -3\n--- a/m.py\n+++ b/m.py\n@@ -1,")
    # the new version is known: a second patch against @2 works without reading again
    again = await patch_file(ctx, "m.py", 2, [edit(1, 1, "first = 1\n")])
    assert again.version == 3 and py.read_text().startswith("first = 1\n")


def _applies_with_patch_command(diff: str, before: str, after: str, tmp_path: Path) -> None:
    """``diff`` turns ``before`` into ``after`` with patch(1)."""
    copy = tmp_path / "copy.py"
    copy.write_text(before)
    done = subprocess.run(["patch", "-s", str(copy)], input=diff, text=True, capture_output=True)
    assert done.returncode == 0, done.stderr + done.stdout
    assert copy.read_text() == after


async def test_diff_applies_with_patch_command(ctx: ToolContext, py: Path, tmp_path: Path) -> None:
    before = py.read_text()
    result = await patch_file(
        ctx, "m.py", 1, [edit(1, 1, "a = 0\n"), edit(10, 10, "z = 9\nzz = 10\n")]
    )
    _applies_with_patch_command(result.diff, before, py.read_text(), tmp_path)


async def test_lines_an_edit_writes_back_unchanged_are_context_not_changes(
    ctx: ToolContext, py: Path, tmp_path: Path
) -> None:
    # the model replaces lines 3-5 with the same three lines and one more after line 4: the
    # file gained one line, and the diff and counts say so (as the block's file change does)
    before = py.read_text()
    result = await patch_file(
        ctx, "m.py", 1, [edit(3, 5, "line3 = 3\nline4 = 4\nmid = 0\nline5 = 5\n")]
    )
    assert (result.added, result.removed) == (1, 0)
    assert "-line" not in result.diff and "+line" not in result.diff
    assert (
        "@@ -2,6 +2,7 @@\n line2 = 2\n line3 = 3\n line4 = 4\n+mid = 0\n line5 = 5\n" in result.diff
    )
    _applies_with_patch_command(result.diff, before, py.read_text(), tmp_path)
    # an edit that writes its lines back as they were changes nothing
    same = await patch_file(ctx, "m.py", 2, [edit(1, 2, "line1 = 1\nline2 = 2\n")])
    assert (same.diff, same.added, same.removed) == ("", 0, 0)


async def test_edits_move_after_an_outside_change(ctx: ToolContext, py: Path) -> None:
    # someone else adds two lines at the top after the model read @1
    py.write_text("# header\n# more\n" + SOURCE)
    result = await patch_file(ctx, "m.py", 1, [edit(5, 5, "five = 5\n")])
    lines = py.read_text().splitlines()
    assert lines[:2] == ["# header", "# more"] and lines[6] == "five = 5"
    assert lines[5] == "line4 = 4" and lines[7] == "line6 = 6"
    assert result.rebased_from == 1 and result.version == 3  # @2 is the outside change


async def test_a_file_of_repeated_lines_is_not_searched_for_minutes(
    ctx: ToolContext, workspace: Path
) -> None:
    """Moving edits onto a changed file looks through every pair of equal lines: 4,000 equal
    lines took 2 s of Vis's CPU (100,000 would take hours, in a thread no Esc stops); such a
    file is refused at once."""
    big = workspace / "big.txt"
    big.write_text("x\n" * 4000)
    cat_file(ctx, "big.txt", 1, 1)
    big.write_text("x\n" * 2000 + "y\n" + "x\n" * 2000)
    with pytest.raises(PatchError, match=r"big.txt \(now @2\) changed since you read it, and "):
        await patch_file(ctx, "big.txt", 1, [edit(1, 1, "z\n")])
    assert big.read_text().startswith("x\n")


async def test_refusals_leave_the_file_byte_identical(ctx: ToolContext, py: Path) -> None:
    py.write_text(SOURCE.replace("line5 = 5", "line5 = 55"))
    before = py.read_bytes()
    with pytest.raises(PatchError, match=r"lines 4-6 of m.py \(now @2\) changed since you read"):
        await patch_file(ctx, "m.py", 1, [edit(1, 1, "ok = 1\n"), edit(4, 6, "x = 1\n")])
    assert py.read_bytes() == before
    cat_file(ctx, "m.py")
    with pytest.raises(PatchError, match="the edits of lines 2-3 and line 3 overlap"):
        await patch_file(ctx, "m.py", 2, [edit(2, 3, "a = 1\n"), edit(3, 3, "b = 1\n")])
    with pytest.raises(PatchError, match=r"would not parse.*Python line 2"):
        await patch_file(ctx, "m.py", 2, [edit(2, 2, "def broken(:\n")])
    with pytest.raises(
        PatchError, match="the edit of line 12 is past the end of m.py @2, which has 10 lines"
    ):
        await patch_file(ctx, "m.py", 2, [edit(12, 12, "x = 1\n")])
    with pytest.raises(PatchError, match="unknown version @7 of m.py"):
        await patch_file(ctx, "m.py", 7, [edit(1, 1, "x = 1\n")])
    with pytest.raises(PatchError, match="already exists; you last saw @2"):
        await patch_file(ctx, "m.py", 0, "x = 1\n")
    with pytest.raises(PatchError, match="end=1 before start=3"):
        await patch_file(ctx, "m.py", 2, [edit(3, 1, "")])
    assert py.read_bytes() == before


async def test_unread_file_and_stale_version(workspace: Path, tmp_path: Path) -> None:
    ctx = ToolContext(workspace, "s", tmp_path / "o")
    (workspace / "n.txt").write_text("a\n")
    with pytest.raises(PatchError, match="@1 of n.txt: no version of it has been read yet"):
        await patch_file(ctx, "n.txt", 1, [edit(1, 1, "b\n")])
    from vis_core.tools.versions import FileVersions

    small = ToolContext(workspace, "s", tmp_path / "o", versions=FileVersions(keep=2))
    for i in range(3):
        (workspace / "n.txt").write_text(f"{i}\n")
        cat_file(small, "n.txt")
    with pytest.raises(PatchError, match=r"stale version @1 of n.txt; versions @2–@3 are known"):
        await patch_file(small, "n.txt", 1, [edit(1, 1, "b\n")])


async def test_a_syntax_refusal_quotes_the_edited_line_not_the_one_on_disk(
    ctx: ToolContext, py: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Vis runs in the workspace: CPython finds m.py there by the name parsed
    monkeypatch.chdir(py.parent)
    with pytest.raises(PatchError, match=r"Python line 3: invalid syntax: 'line3 = 3 \+'"):
        await patch_file(ctx, "m.py", 1, [edit(3, 3, "line3 = 3 +\n")])
    assert py.read_text() == SOURCE
    assert (syntax_error("m.py", "a = 1\nb = 2 +\n") or "").endswith(": 'b = 2 +'")


@pytest.mark.parametrize(
    ("name", "good", "bad", "why"),
    [
        ("c.json", '{"a": 1}\n', '{"a": 1,\n', "JSON line"),
        ("c.toml", "a = 1\n", "a = = 1\n", "TOML"),
        ("c.yaml", "a: 1\n", "a: [1\n", "YAML"),
    ],
)
async def test_data_files_must_parse(
    ctx: ToolContext, workspace: Path, name: str, good: str, bad: str, why: str
) -> None:
    await patch_file(ctx, name, 0, good)
    before = (workspace / name).read_bytes()
    with pytest.raises(PatchError, match=why):
        await patch_file(ctx, name, 1, [edit(1, 1, bad)])
    assert (workspace / name).read_bytes() == before


async def test_a_file_that_did_not_parse_can_be_fixed_in_steps(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "b.py").write_text("def f(:\n    pass\nx = (\n")
    cat_file(ctx, "b.py")
    result = await patch_file(ctx, "b.py", 1, [edit(1, 1, "def f():\n")])
    assert result.version == 2  # still broken (line 3), but no worse: allowed


async def test_create_new_files(ctx: ToolContext, workspace: Path) -> None:
    result = await patch_file(ctx, "pkg/new.py", 0, "x = 1\n")
    assert (workspace / "pkg/new.py").read_text() == "x = 1\n"
    assert result.created and result.version == 1 and result.added == 1
    assert result.diff.startswith("--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,1 @@\n+x = 1\n")
    await patch_file(ctx, "@other.txt", None, [edit(1, 0, "no newline")])
    assert (workspace / "other.txt").read_text() == "no newline\n"
    with pytest.raises(PatchError, match="would not parse"):
        await patch_file(ctx, "bad.py", 0, "def (:\n")
    assert not (workspace / "bad.py").exists()
    with pytest.raises(FileNotFoundError, match=r"gone.py does not exist, and no version of it"):
        await patch_file(ctx, "gone.py", 3, [edit(1, 1, "")])
    (workspace / "pkg" / "new.py").unlink()
    with pytest.raises(FileNotFoundError, match=r"no longer exists \(it was deleted or moved af"):
        await patch_file(ctx, "pkg/new.py", 1, [edit(1, 1, "")])


async def test_line_endings_and_missing_final_newline(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    cat_file(ctx, "w.txt")
    await patch_file(ctx, "w.txt", 1, [edit(2, 2, "B\nB2\n")])
    assert (workspace / "w.txt").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"
    (workspace / "e.txt").write_text("x\ny")
    cat_file(ctx, "e.txt")
    result = await patch_file(ctx, "e.txt", 1, [edit(3, 2, "z\n")])
    assert (workspace / "e.txt").read_text() == "x\ny\nz"
    assert "-y\n\\ No newline at end of file\n+y\n+z\n\\ No newline at end of file\n" in result.diff


async def test_writes_keep_mode_and_follow_symlinks(ctx: ToolContext, workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    (workspace / "alias.sh").symlink_to(script)
    cat_file(ctx, "alias.sh")
    await patch_file(ctx, "alias.sh", 1, [edit(1, 1, "echo 2\n")])
    assert (workspace / "alias.sh").is_symlink()
    assert script.read_text() == "echo 2\n" and script.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in workspace.iterdir() if "vis-tmp" in p.name] == []


async def test_concurrent_patches_go_through_one_queue(ctx: ToolContext, workspace: Path) -> None:
    path = workspace / "c.py"
    path.write_text(SOURCE)
    cat_file(ctx, "c.py")
    (workspace / "alias.py").symlink_to(path)
    # every call edits a different line of the same @1; through the queue each one rebases
    # onto the result of the previous ones, so no change is lost
    calls = [
        patch_file(ctx, "c.py" if i % 2 else "alias.py", 1, [edit(i, i, f"line{i} = {i * 100}\n")])
        for i in range(1, 11)
    ]
    results = await asyncio.gather(*calls)
    assert path.read_text() == "".join(f"line{i} = {i * 100}\n" for i in range(1, 11))
    assert sorted(r.version for r in results) == list(range(2, 12))


async def _turn_events(workspace: Path, tmp_path: Path, code: str, request: str) -> list[object]:
    """The events of one scripted turn that runs ``code`` in a block, on a real Host."""
    from cli_support import script

    from vis_core.host import Host, HostOptions

    steps = [{"code": code}, {"text": "Done."}]
    host = await Host.open(
        HostOptions(workspace=workspace, provider="scripted", script=script(tmp_path, steps))
    )
    events: list[object] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit(request)
    finally:
        await host.close()
    return events


async def test_a_huge_patch_keeps_a_bounded_diff_and_saves_the_whole_of_it(
    workspace: Path, tmp_path: Path
) -> None:
    """A patch that writes 5,000 lines: its Activity (stored and shown) and its result (what
    the model reads) keep the diff's head within 2,000 lines / 50 KB and say it was cut and
    where the whole diff was saved. Each such Activity stored its diff whole: 20 patches of
    5 MB grew vis.db by 107 MB."""
    import re

    from vis_core.events import ActivityEnded, BlockFinished
    from vis_core.model.activity import ActivityDiff, ActivityText
    from vis_core.text_limits import MAX_BYTES, MAX_LINES

    code = (
        "text = ''.join(f'line {n}: ' + 'x' * 50 + '\\n' for n in range(5000))\n"
        "r = await patch('big.txt', 0, text)\n"
        "print(r.added, len(str(r)) < 60_000)\n"
        "print(str(r).splitlines()[-1])"
    )
    events = await _turn_events(workspace, tmp_path, code, "write a big file")
    [ended] = [e.activity for e in events if isinstance(e, ActivityEnded) and e.activity]
    assert ended.presentation is not None
    assert ended.presentation.summary.endswith("created +5000 −0")  # counted whole
    diff, said = ended.presentation.content
    assert isinstance(diff, ActivityDiff) and isinstance(said, ActivityText)
    assert len(diff.diff.encode()) <= MAX_BYTES and diff.diff.count("\n") <= MAX_LINES
    assert diff.diff.startswith("--- /dev/null\n+++ b/big.txt\n")
    found = re.search(
        r"showing the first [\d,]+ of 5,003 lines .* Whole diff saved to: (\S+)\]", said.text
    )
    assert found is not None
    [block] = [e for e in events if isinstance(e, BlockFinished)]
    assert block.stdout == f"5000 True\n{said.text}\n"  # what the model reads says it too
    whole = Path(found[1]).read_text()  # the saved file holds every line
    assert whole.startswith("--- /dev/null") and whole.endswith("+line 4999: " + "x" * 50 + "\n")


async def test_a_diff_too_large_to_save_is_cut_and_says_the_file_holds_it(
    workspace: Path, tmp_path: Path
) -> None:
    """A diff past 8 MB is not saved whole (it would copy what the file holds): the result
    and the Activity say so and name the file to read instead."""
    from vis_core.events import ActivityEnded, BlockFinished

    code = (
        "text = ''.join(f'{n:09} ' + 'z' * 990 + '\\n' for n in range(9_000))\n"
        "r = await patch('huge.txt', 0, text)\n"
        "print(r.diff_cut)"
    )
    events = await _turn_events(workspace, tmp_path, code, "write a huge file")
    [ended] = [e.activity for e in events if isinstance(e, ActivityEnded) and e.activity]
    assert ended.presentation is not None
    said = ended.presentation.content[-1].text
    assert said.startswith("[Output truncated: showing the first ")
    assert said.endswith("The whole diff is too large to save; cat('huge.txt') reads the file.]")
    [block] = [e for e in events if isinstance(e, BlockFinished)]
    assert block.stdout == f"{said}\n"
    assert not list(tmp_path.rglob("patch-*"))  # nothing saved
