"""Every block is a row in the transcript: code, output, error, files changed; live and resumed."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.widgets.block_row import BlockRow
from vis_tui.widgets.paths import PathChip

from .support import started, until, vis_app, write_script

REMOVE = "import os\nos.remove('README.md')\nprint('removed')"
FAIL = "x = 0\n1 / x"


def _screen(app: object, first: str) -> list[str]:
    """The transcript's lines from the first request to the prompt."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    lines = ["".join(seg.text for seg in strip).rstrip() for strip in strips]
    start = next(n for n, line in enumerate(lines) if f"› {first}" in line)
    end = next(n for n, line in enumerate(lines) if "▔" in line or "No model is" in line)
    shown = lines[start:end]
    while shown and not shown[-1].strip():
        shown.pop()
    return shown


def _drawn(app: object, first: str) -> str:
    """:func:`_screen` as one text; empty until the request is drawn."""
    try:
        return "\n".join(_screen(app, first))
    except StopIteration:
        return ""


async def test_a_block_that_deletes_a_file_shows_its_code_the_deletion_and_an_error(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "README.md").write_text("# Project\n", encoding="utf-8")
    script = write_script(
        tmp_path,
        [{"code": REMOVE}, {"code": FAIL}, {"text": "Done: removed README."}],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"tidy up", "enter")
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: app.main.transcript.last_answer == "Done: removed README.")
        await until(pilot, lambda: "ZeroDivisionError" in _drawn(app, "tidy up"))
        shown = "\n".join(_screen(app, "tidy up"))
        assert "✓ Python" in shown and "os.remove('README.md')" in shown
        assert "✗ README.md  removed" in shown
        assert "✗ Python" in shown and "ZeroDivisionError: division by zero" in shown
        assert "The code block stopped" not in shown  # said once, on its row
        rows = list(app.main.query(BlockRow))
        assert [row.display for row in rows] == [True, True]
        rows[0].focus()
        await pilot.press("enter")
        await until(pilot, lambda: "-# Project" in _drawn(app, "tidy up"))
        opened = "\n".join(_screen(app, "tidy up"))
        assert rows[0].expanded
        assert "-# Project" in opened and "removed" in opened  # the diff and the output


async def test_a_resumed_session_shows_the_same_block_rows_as_live(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "README.md").write_text("# Project\n", encoding="utf-8")
    (workspace / "a.txt").write_text("hello\n", encoding="utf-8")
    script = write_script(
        tmp_path,
        [
            {"text": "First I look.", "code": 'text = await cat("a.txt")'},
            {"code": REMOVE},
            {"code": FAIL},
            {"text": "Done: removed README."},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 50)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"tidy up", "enter")
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: app.main.transcript.last_answer == "Done: removed README.")
        await until(pilot, lambda: _drawn(app, "tidy up").count("Python") == 2)
        await until(pilot, lambda: "Done: removed README." in _drawn(app, "tidy up"))
        live = _screen(app, "tidy up")
        session_id = app.session.id
    resumed_app = vis_app(workspace, resume=session_id)
    async with resumed_app.run_test(size=(100, 50)) as pilot:
        await started(resumed_app, pilot)
        await until(pilot, lambda: _drawn(resumed_app, "tidy up") == "\n".join(live))  # once drawn
        resumed = _screen(resumed_app, "tidy up")
    shown = "\n".join(live)
    # the block that only read a file is that read's row; the others are rows of their own
    assert shown.count("Python") == 2 and "Read file" in shown and "✗ README.md" in shown
    assert shown.index("First I look.") < shown.index("Read file") < shown.index("os.remove")
    assert resumed == live, "\n".join(live) + "\n=====\n" + "\n".join(resumed)


async def test_a_block_of_one_call_shows_its_row_when_it_printed_or_did_more(
    workspace: Path, tmp_path: Path
) -> None:
    """A block that made one call was shown as that call's row only, so what it printed and
    the rest of its code were nowhere on screen (only in an export): ``print(await cat())``
    hid the text the model read. Only a block that is the call alone, printing nothing, folds
    into the call's row; a failed call's error is said once, whatever class names lead it."""
    (workspace / "a.txt").write_text("hello from a\n", encoding="utf-8")
    script = write_script(
        tmp_path,
        [
            {"code": 'print(await cat("a.txt"))'},
            {"code": 'text = await cat("a.txt")\nsize = len(text)'},
            {"code": 'await cat("a.txt")'},
            {"code": 'await patch("a.txt", 1, [{"text": "x"}])'},
            {"text": "Read."},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 50)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"read", "enter")
        await until(pilot, lambda: "Read." in _drawn(app, "read"))
        shown = _drawn(app, "read")
    assert shown.count("Python") == 2, shown  # the print, and the two statements
    assert "printed 2 lines" in shown and "size = len(text)" in shown  # Enter opens the text
    assert shown.count("Read file") == 3, shown
    assert shown.count("has no 'start'") == 1, shown  # "VisToolError: PatchError: …" too


async def test_a_cut_output_shows_the_models_copy_and_opens_the_whole_one(
    workspace: Path, tmp_path: Path
) -> None:
    code = "for n in range(3000):\n    print('line', n)"
    script = write_script(tmp_path, [{"code": code}, {"text": "Printed a lot."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"print", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Printed a lot.")
        (row,) = app.main.query(BlockRow)
        assert "Output truncated" in row.info.stdout and "line 0\n" not in row.info.stdout
        row.focus()
        await pilot.press("enter")
        await until(pilot, lambda: bool(row.query(PathChip)))
        chip = row.query_one(PathChip)
        whole = Path(chip.path).read_text(encoding="utf-8")
        assert "line 0\n" in whole and "line 2999\n" in whole


async def test_a_folded_row_keeps_each_long_line_to_one_line(
    workspace: Path, tmp_path: Path
) -> None:
    """A created file's long path (and a long code line) used to wrap in the folded row: the
    mark on one line, the path from the screen's first column on the next ones."""
    deep = "/".join(["folder-with-a-long-name"] * 5) + "/notes.txt"
    code = f"import os\nos.makedirs(os.path.dirname({deep!r}))\nopen({deep!r}, 'w').write('x')"
    script = write_script(tmp_path, [{"code": code}, {"text": "Wrote it."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(80, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"write", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Wrote it.")

        def created() -> list[str]:
            return [ln for ln in _drawn(app, "write").splitlines() if ln.lstrip()[:1] == "+"]

        await until(pilot, lambda: bool(created()))
        (line,) = created()
        assert line.startswith("     + folder-with-a-long-name/") and line.endswith("…"), line
        (row,) = app.main.query(BlockRow)
        row.focus()
        await pilot.press("enter")
        await until(pilot, lambda: "notes.txt" in _drawn(app, "write"))  # opened: whole


async def test_a_running_block_shows_the_last_lines_it_printed_until_it_ends(
    workspace: Path, tmp_path: Path
) -> None:
    code = (
        "import os, time\nfor n in range(1, 6):\n    print(f'epoch {n}', flush=True)\n"
        "while not os.path.exists('go'):\n    time.sleep(0.01)"
    )
    script = write_script(tmp_path, [{"code": code}, {"text": "Trained."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"train", "enter")
        await until(pilot, lambda: "│ epoch 5" in _drawn(app, "train"))
        shown = _drawn(app, "train")
        assert "⋯ Python  running" in shown
        tail = [line.strip() for line in shown.splitlines() if "│" in line]
        assert tail == ["│ epoch 3", "│ epoch 4", "│ epoch 5"]  # the last three, under the code
        (workspace / "go").write_text("")
        await until(pilot, lambda: app.main.transcript.last_answer == "Trained.")
        await until(pilot, lambda: "printed 5 lines" in _drawn(app, "train"))
        assert "│ epoch" not in _drawn(app, "train")  # what it printed opens with the row


def test_a_long_block_s_counts_read_as_the_rest_of_vis_writes_them() -> None:
    """The row's counts go through the shared plural helper: thousands separated, one line."""
    from vis_tui.block_info import BlockInfo
    from vis_tui.widgets.block_row import block_content

    code = "\n".join(f"x{i} = {i}" for i in range(1204))
    info = BlockInfo("i1", code, ended=True, stdout="ok\n" * 2500, duration=1.0)
    head, *_, more = str(block_content(info)).split("\n")
    assert head.endswith("1.0s · 1,204 lines · printed 2,500 lines")
    assert more.strip() == "… 1,201 more lines"
    one = str(block_content(BlockInfo("i2", "a\nb\nc\nd", ended=True, stdout="ok\n")))
    assert "· 4 lines · printed 1 line\n" in one and "… 1 more line" in one


def test_a_cut_output_s_row_counts_every_line_the_block_printed() -> None:
    """A block printed 2,000 lines of which the model's copy keeps the last 914 (50 KB): the
    row says 2,000 lines were printed, not the 916 lines of the kept copy and its note."""
    from vis_core.sandbox.output import TailBuffer
    from vis_tui.block_info import BlockInfo
    from vis_tui.widgets.block_row import block_content

    printed = TailBuffer()
    for i in range(2000):
        printed.add(f"line {i} ünïcödé 日本語 {'x' * 20}\n")
    stdout = printed.text()
    assert stdout.startswith("[Output truncated: showing the last ")
    info = BlockInfo("i1", "for i in range(2000): print(i)", ended=True, stdout=stdout)
    head = str(block_content(info)).split("\n")[0]
    assert head.endswith("· 1 line · printed 2,000 lines"), head


async def test_a_file_name_with_line_breaks_stays_on_its_line(
    workspace: Path, tmp_path: Path
) -> None:
    """A created file's name holding a newline drew its second part on a line of its own,
    from the screen's first column; its line breaks, tab and zero-width space now show as
    escapes, in the folded row, the opened one and an Activity's row."""
    names = ["nl\nname.txt", "tab\tzw\u200b\u2028.txt"]
    code = "".join(f"open({name!r}, 'w').close()\n" for name in names)
    code += "await todo.add('milk\\u200b')"
    script = write_script(tmp_path, [{"code": code}, {"text": "Wrote them."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"write", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Wrote them.")
        await until(pilot, lambda: "Add todo" in _drawn(app, "write"))
        shown = _drawn(app, "write").splitlines()
        assert "     + nl\\nname.txt  created" in shown, shown
        assert "     + tab\\tzw\\u200b\\u2028.txt  created" in shown, shown
        assert not [line for line in shown if line.startswith("name.txt")]
        assert any(line.endswith("Add todo  #1 milk\\u200b") for line in shown), shown
        (row,) = app.main.query(BlockRow)
        row.focus()
        await pilot.press("enter")
        await until(pilot, lambda: "+ nl\\nname.txt  created" in _drawn(app, "write"))
        opened = _drawn(app, "write").splitlines()
        assert not [line for line in opened if line.lstrip().startswith("name.txt")], opened


async def test_a_file_name_with_an_invisible_character_shows_it(
    workspace: Path, tmp_path: Path
) -> None:
    """``setup\\u200c.py`` (a zero-width non-joiner) and ``README\\U000e0020.md`` (a tag
    character) drew as ``setup.py`` and ``README.md`` beside the real ones: every character
    that draws as nothing shows as its escape in a name, the joiners too."""
    names = ["setup.py", "setup\u200c.py", "README\U000e0020.md", "a\u200d\ufe0f.txt"]
    code = "".join(f"open({name!r}, 'w').close()\n" for name in names)
    script = write_script(tmp_path, [{"code": code}, {"text": "Wrote them."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"write", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Wrote them.")
        shown = _drawn(app, "write").splitlines()
        for name in ("setup.py", "setup\\u200c.py", "README\\U000e0020.md", "a\\u200d\\ufe0f.txt"):
            assert f"     + {name}  created" in shown, shown


async def test_an_opened_blocks_long_code_line_goes_on_under_a_mark(
    workspace: Path, tmp_path: Path
) -> None:
    # At 80 columns the rest of a long line sat at the code's first column with no mark:
    # `div(1, 0)\n")` read like a line of its own.
    from textual.geometry import Offset
    from textual.selection import Selection

    long_line = "print('the division of one by zero fails with ZeroDivisionError: ' + 'div(1, 0)')"
    code = f"x = 1\n{long_line}"
    script = write_script(tmp_path, [{"code": code}, {"text": "Done."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(80, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"divide", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Done.")
        (row,) = app.main.query(BlockRow)
        row.focus()
        await pilot.press("enter")
        await until(pilot, lambda: "↪" in _drawn(app, "divide"))
        drawn = _drawn(app, "divide").splitlines()
        at = next(n for n, line in enumerate(drawn) if "print('the division" in line)
        first, *more = [line.strip() for line in drawn[at:] if line.strip()]
        assert more[0].startswith("↪ "), drawn
        rest = "".join(line.removeprefix("↪ ") for line in more if line.startswith("↪ "))
        assert first + rest == long_line
        # a selection over the code reads it as it is, without the marks
        view = row.query_one(".block-code")
        whole = Selection(Offset(0, 0), Offset(len(long_line), 1))
        assert view.get_selection(whole) == (code, "\n")
