"""`vis run` shows every block: one line with its code, duration and files; --json carries them."""

from __future__ import annotations

import json
import re

from cli_support import script, vis

CODE = (
    "import os\n"
    "os.remove('README.md')\n"
    "open('notes.txt', 'w').write('one\\ntwo\\n')\n"
    "open('a.txt', 'a').write('more\\n')\n"
    "print('done')"
)


def _run(workspace, vis_home, tmp_path, *extra: str):
    (workspace / "README.md").write_text("# Project\n")
    (workspace / "a.txt").write_text("hello\n")
    steps = [{"code": CODE}, {"code": "1 / 0"}, {"text": "Done: removed README."}]
    s = script(tmp_path, steps)
    return vis(
        "run",
        *extra,
        "--provider",
        "scripted",
        "--script",
        str(s),
        "tidy up",
        cwd=workspace,
        env_home=vis_home,
    )


def test_run_prints_one_line_per_block_with_the_files_it_changed(workspace, vis_home, tmp_path):
    result = _run(workspace, vis_home, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "python" in line]
    assert len(lines) == 2, result.stdout
    first, second = lines
    assert first.startswith("✓ python import os")
    assert "✗ README.md" in first and "+ notes.txt" in first and "~ a.txt" in first
    assert second.startswith("✗ python 1 / 0") and "ZeroDivisionError: division by zero" in second
    assert "s · " in first  # its duration


def test_run_json_carries_the_block_with_its_diffs(workspace, vis_home, tmp_path):
    result = _run(workspace, vis_home, tmp_path, "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    blocks = [e for e in events if e["type"] == "BlockFinished"]
    files = {f["path"]: f for f in blocks[0]["files"]}
    assert files["README.md"]["kind"] == "removed"
    assert "-# Project" in files["README.md"]["diff"]
    assert files["notes.txt"]["kind"] == "created" and files["notes.txt"]["added"] == 2
    assert "+more" in files["a.txt"]["diff"]
    assert blocks[1]["files"] == [] and "ZeroDivisionError" in blocks[1]["error"]


def test_a_command_that_exits_non_zero_is_marked_failed_in_run_and_export(
    workspace, vis_home, tmp_path
):
    """As the app shows it: the call returned a handle, but the command failed."""
    from vis_core.paths import VisPaths
    from vis_core.session_files import ExportFormat, export_session
    from vis_core.store import Store

    code = "await (await shell('exit 3')).wait(30)\nawait (await shell('true')).wait(30)"
    s = script(tmp_path, [{"code": code}, {"text": "Ran them."}])
    result = vis("run", "--provider", "scripted", "--script", str(s), "run", cwd=workspace,
                 env_home=vis_home)  # fmt: skip
    assert result.returncode == 0, result.stderr
    waited = [line for line in result.stdout.splitlines() if "waited" in line]
    assert [line[0] for line in waited] == ["✗", "✓"], result.stdout
    assert "exit 3" in waited[0]
    # a command's time is written as a block's is (it said "0.2 s" beside a block's "0.6s")
    assert all(re.search(r" · \d\.\ds$", line) for line in waited), waited

    store = Store(VisPaths.from_env().db_file)
    row = store.latest_session(workspace)
    assert row is not None
    text = export_session(store, row, ExportFormat.MD)
    marks = [line[2] for line in text.splitlines() if "waited" in line]
    assert marks == ["✗", "✓"], text


def test_a_failed_call_says_its_error_once_without_class_names(workspace, vis_home, tmp_path):
    (workspace / "a.txt").write_text("one\n")
    code = "await patch('a.txt', 1, [{'start': 1, 'end': 1, 'text': 'two\\n'}])"
    s = script(tmp_path, [{"code": code}, {"text": "Could not."}])
    result = vis("run", "--provider", "scripted", "--script", str(s), "edit", cwd=workspace,
                 env_home=vis_home)  # fmt: skip
    line = next(line for line in result.stdout.splitlines() if "Edit file" in line)
    assert line.startswith("✗") and line.count("no version of it has been read yet") == 1, line
    assert "PatchError" not in line


PRINTS = (
    "for i in range(1, 31):\n"
    "    print(f'step {i}')\n"
    "print('progress 10%\\rprogress 100%')\n"
    "print('\\x1b]52;c;aGk=\\x07copied? ' + 'x' * 300)"
)


def test_run_shows_the_last_lines_a_block_printed(workspace, vis_home, tmp_path):
    """In CI nothing of what a block printed showed: its last lines now follow its line,
    after a note of how many came before; --json keeps all of it."""
    steps = [{"code": PRINTS}, {"code": "print('one line')"}, {"text": "Done."}]
    s = script(tmp_path, steps)
    args = ("--provider", "scripted", "--script", str(s), "count")
    result = vis("run", *args, cwd=workspace, env_home=vis_home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("✓ python for i"))
    shown = lines[first + 1 : first + 12]
    assert shown[0] == "  │ … 22 earlier lines"
    assert shown[1:9] == [f"  │ step {i}" for i in range(23, 31)]
    assert shown[9] == "  │ progress 100%"  # as a terminal shows a redrawn line
    last = shown[10]
    assert last.startswith("  │ \\x1b]52;c;aGk=\\x07copied? xxx") and last.endswith("…")
    assert "\x1b]52" not in result.stdout and len(last) < 200
    second = next(i for i, line in enumerate(lines) if line.startswith("✓ python print("))
    assert lines[second + 1] == "  │ one line" and lines[second + 2] == "Done."

    result = vis("run", "--json", *args, cwd=workspace, env_home=vis_home)
    blocks = [json.loads(line) for line in result.stdout.splitlines()]
    (whole, _) = [e["stdout"] for e in blocks if e["type"] == "BlockFinished"]
    assert whole.startswith("step 1\nstep 2\n") and whole.count("\n") == 32


def test_run_counts_the_earlier_lines_the_sandbox_cut_off():
    """Under a cut output's note, the count of earlier lines is of every line the block
    printed (2,000), not of the lines the model's copy kept."""
    from vis_core.printmode import printed_lines
    from vis_core.sandbox.output import TailBuffer

    printed = TailBuffer()
    for i in range(2000):
        printed.add(f"line {i} {'x' * 50}\n")
    note, earlier, *last = printed_lines(printed.text())
    assert "[Output truncated: showing the last " in note
    assert earlier == "  [dim]│ … 1,990 earlier lines[/]"
    assert last[-1] == "  [dim]│[/] line 1999 " + "x" * 50


def test_a_command_is_one_entry_in_an_export_with_its_final_state(workspace, vis_home, tmp_path):
    """An export listed each call on a command's handle: "✓ … running (pid N)" for its
    start, then "✗ … exit 1". A command is one entry now, as the app's row: the newest
    call, and the calls between (not the start) listed under it."""
    from vis_core.paths import VisPaths
    from vis_core.session_files import ExportFormat, export_session
    from vis_core.store import Store

    code = "sh = await shell('read line; exit 1')\nawait sh.type('go\\n')\nawait sh.wait(30)"
    s = script(tmp_path, [{"code": code}, {"text": "It failed."}])
    result = vis("run", "--provider", "scripted", "--script", str(s), "run", cwd=workspace,
                 env_home=vis_home)  # fmt: skip
    assert result.returncode == 0, result.stderr

    store = Store(VisPaths.from_env().db_file)
    row = store.latest_session(workspace)
    assert row is not None
    text = export_session(store, row, ExportFormat.MD)
    commands = [line for line in text.splitlines() if "Run command" in line]
    assert len(commands) == 2, text
    assert commands[0] == "- ✗ Run command — read line; exit 1 · waited · exit 1"
    assert commands[1].startswith("  - earlier on this handle: ✓ Run command — read line")
    assert "typed 'go\\n'" in commands[1]
    page = export_session(store, row, ExportFormat.HTML)
    assert page.count("Run command") == 2 and page.count("Earlier on this handle") == 1, page
