"""Each Activity says exactly what the model did: the command it ran, the tests it chose, the
lines it changed, the arguments it gave (found by a tester checking the model's claims)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pilot_keys import type_keys
from textual.widgets import Static

from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.block_row import BlockRow

from .support import started, until, vis_app, write_script

CASE = "x=b; case $x in a) echo A;; b) echo B;; esac"
HEREDOC = "cat > tools_check.py <<'EOF'\nprint('ok;  done')\nEOF\npython3 tools_check.py"


def _text(widget: Static) -> str:
    return str(widget.render())


async def _copied(app, pilot, row: ActivityRow) -> str:
    row.focus()
    await pilot.press("ctrl+x", "a")
    return app.clipboard


async def test_a_command_is_shown_and_copied_as_it_ran(workspace: Path, tmp_path: Path) -> None:
    """A ``case`` with ``;;`` was shown in four stages with a ``;`` of each ``;;`` gone and
    copied as a command bash refused; a here-document showed and copied as one line. The
    copy is now the command that ran, and what is shown keeps its lines."""
    code = "\n".join(
        f"sh = await shell({command!r})\nprint(await sh.wait(10))" for command in (CASE, HEREDOC)
    )
    script = write_script(tmp_path, [{"code": code}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"run", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        await pilot.pause()
        case, heredoc = app.main.query(ActivityRow)
        copied = await _copied(app, pilot, case)
        assert copied.splitlines()[1] == f"$ {CASE}", copied
        ran = subprocess.run(["bash", "-c", CASE], capture_output=True, text=True, check=True)
        assert ran.stdout == "B\n"
        copied = await _copied(app, pilot, heredoc)
        assert f"$ {HEREDOC}\n" in copied, copied
        heredoc.focus()
        await pilot.press("enter")
        await until(pilot, lambda: heredoc.has_class("-expanded"))
        await pilot.pause()
        shown = "\n".join(_text(s) for s in heredoc.query(".terminal-block").results(Static))
        assert shown.splitlines()[:4] == [
            "$ cat > tools_check.py <<'EOF'",
            "  print('ok;  done')",
            "  EOF",
            "  python3 tools_check.py",
        ], shown


async def test_a_call_refused_for_its_arguments_shows_them_and_the_code(
    workspace: Path, tmp_path: Path
) -> None:
    """``grep("def", path="calc")`` (grep takes ``paths``) showed only ``✗ Search files ''``:
    the query it was given was dropped, and the block's row, hidden behind the call's, held
    the only copy of the code. The query shows, and the block's row with its code."""
    (workspace / "calc").mkdir()
    code = 'print(await grep("def", path="calc"))'
    script = write_script(tmp_path, [{"code": code}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"find", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        await pilot.pause()
        (row,) = app.main.query(ActivityRow)
        header = _text(row.query_one(".activity-header", Static))
        assert "✗ Search files  'def'" in header, header
        assert "unexpected keyword argument 'path'" in header
        (block,) = app.main.query(BlockRow)
        assert block.display and block.info.code == code


async def test_output_redrawn_with_carriage_returns_shows_as_a_terminal_draws_it(
    workspace: Path, tmp_path: Path
) -> None:
    """A progress line redrawn with ``\\r`` 13 times made the row say "printed 13 lines" while
    Printed ran the draws together on one line, ``print("cr\\rover")`` showed ``crover``, and
    a shell Activity split each ``\\r`` into a line. All three show a terminal's drawing now:
    the last overwrite wins on a line."""
    code = (
        'for n in range(13):\n    print(f"\\rdownloading {n}%", end="")\nprint()\n'
        'print("cr\\rover")\n'
        "sh = await shell(\"printf 'abc\\\\rX\\\\n'\")\nawait sh.wait(10)"
    )
    script = write_script(tmp_path, [{"code": code}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"fetch", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        await pilot.pause()
        (block,) = app.main.query(BlockRow)
        header = _text(block.query_one(".block-header", Static))
        assert "printed 2 lines" in header, header
        block.focus()
        await pilot.press("enter")
        await until(pilot, lambda: block.has_class("-expanded"))
        await pilot.pause()
        printed = _text(block.query_one(".block-output", Static))
        assert printed == "downloading 12%\nover", printed
        (shell,) = app.main.query(ActivityRow)
        [terminal] = shell.record.presentation.content
        assert [line.text for line in terminal.lines] == ["Xbc"]
