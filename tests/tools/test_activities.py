"""Render callbacks: headlines, summaries and evidence blocks for each built-in."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vis_core.model.activity import (
    ActivityDiff,
    ActivityTable,
    ActivityTerminal,
    ActivityTerminalLine,
    SymbolTag,
)
from vis_core.system.shell_view import command_stages
from vis_core.tools.display import shorten_path
from vis_core.tools.patching import PatchError


def render(tool, phase: str, *args, result=None, error=None, **kwargs):
    return tool.activity.render(phase=phase, args=args, kwargs=kwargs, result=result, error=error)


def test_tags_and_start_policy(tools: dict) -> None:
    expected = {
        "cat": (SymbolTag.OBSERVATION, False, "Read file"),
        "grep": (SymbolTag.OBSERVATION, False, "Search files"),
        "ls": (SymbolTag.OBSERVATION, False, "List files"),
        "patch": (SymbolTag.MUTATION, True, "Edit file"),
        "shell": (SymbolTag.MUTATION, True, "Run command"),
        "shells": (SymbolTag.OBSERVATION, False, "List commands"),
        "run_tests": (SymbolTag.VERIFICATION, True, "Run tests"),
    }
    assert {
        n: (t.tag, t.activity.show_start, t.activity.label) for n, t in tools.items()
    } == expected


def test_shorten_path(workspace: Path) -> None:
    assert shorten_path(workspace / "src" / "a.py", workspace) == "src/a.py"
    assert shorten_path(workspace, workspace) == "."
    assert shorten_path(Path.home() / "notes.txt", workspace) == "~/notes.txt"
    assert shorten_path("/etc/hosts", workspace) == "/etc/hosts"
    assert shorten_path("rel/x.py", workspace) == "rel/x.py"


def test_cat_and_ls(tools: dict, workspace: Path) -> None:
    (workspace / "a.py").write_text("".join(f"{i}\n" for i in range(30)))
    whole = tools["cat"].fn("a.py")
    shown = render(tools["cat"], "success", "a.py", result=whole)
    assert (shown.headline, shown.summary, shown.content) == ("Read file", "a.py @1 · 30 lines", ())
    part = tools["cat"].fn("a.py", 3, 4)
    assert render(tools["cat"], "success", "a.py", 3, 4, result=part).summary == (
        "a.py @1 · lines 3–4 of 30"
    )
    failed = render(
        tools["cat"], "failure", path="nope.py", error=FileNotFoundError("cat: no file nope.py")
    )
    assert failed.summary == "nope.py: no file nope.py"
    listing = tools["ls"].fn()
    assert render(tools["ls"], "success", result=listing).summary == ". · 0 folders, 1 file"


async def test_grep_table_names_files(tools: dict, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "m.py").write_text("alpha\nbeta alpha\n")
    out = await tools["grep"].fn("alpha")
    shown = render(tools["grep"], "success", "alpha", result=out)
    assert shown.summary == "'alpha' · 2 matches in 1 file"
    [table] = shown.content
    assert isinstance(table, ActivityTable)
    assert table.rows == (("src/m.py", "1", "alpha"), ("src/m.py", "2", "beta alpha"))
    assert table.paths == (str(workspace / "src/m.py"),) * 2
    none = await tools["grep"].fn("zzz", "src")
    assert render(tools["grep"], "success", "zzz", "src", result=none).summary == (
        "'zzz' in src · no matches"
    )


async def test_patch_shows_its_diff(tools: dict, workspace: Path) -> None:
    result = await tools["patch"].fn("n.py", 0, "x = 1\n")
    shown = render(tools["patch"], "success", "n.py", 0, "x = 1\n", result=result)
    assert (shown.headline, shown.summary) == ("Edit file", "n.py @1 · created +1 −0")
    [diff] = shown.content
    assert isinstance(diff, ActivityDiff) and diff.path == str(workspace / "n.py")
    assert "+x = 1" in diff.diff
    started = render(tools["patch"], "start", "n.py", 1, [])
    assert started.summary == "n.py @1"
    refused = render(
        tools["patch"], "failure", "n.py", 1, [], error=ValueError("patch: edits overlap")
    )
    assert refused.summary == "n.py @1: edits overlap"


async def test_an_edit_s_diff_counts_the_lines_it_changed(tools: dict, workspace: Path) -> None:
    """An edit that wrote ``return a / b`` back between new lines was counted ``+7 −1`` (the
    diff removed and re-added it) while the block's row, from git, said ``+6``. The diff is a
    line diff of the edited lines now: both say ``+6``."""
    (workspace / "ops.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n"
    )
    text = (
        "    if b == 0:\n        raise ValueError('zero')\n    return a / b\n"
        "\n\ndef pow(a, b):\n    return a ** b\n"
    )
    edits = [{"start": 6, "end": 6, "text": text}]
    tools["cat"].fn("ops.py")
    result = await tools["patch"].fn("ops.py", 1, edits)
    shown = render(tools["patch"], "success", "ops.py", 1, edits, result=result)
    assert shown.summary == "ops.py @2 · edited +6 −0"
    [diff] = shown.content
    assert "-    return a / b" not in diff.diff and diff.diff.count("\n+") == 1 + 6
    two = [{"start": 1, "end": 2, "text": "def add(a, b):\n    return b + a\n"}]
    result = await tools["patch"].fn("ops.py", 2, two)
    assert render(tools["patch"], "success", "ops.py", 2, two, result=result).summary == (
        "ops.py @3 · edited +1 −1"
    )


async def test_patch_as_new_of_a_file_that_exists_says_it_exists(
    tools: dict, workspace: Path
) -> None:
    """``patch(path, None, [{"start": 1, "end": 1, …}])`` on a file that exists said "a new
    file starts empty…": the file is not new. It says so, and how to get its version."""
    (workspace / "ops.py").write_text("x = 1\n")
    edits = [{"start": 1, "end": 1, "text": "x = 2\n"}]
    with pytest.raises(PatchError) as refused:
        await tools["patch"].fn("ops.py", None, edits)
    assert str(refused.value) == (
        "patch: ops.py already exists; version None creates a new file. Read it with "
        "cat('ops.py') and pass the version from its header"
    )
    with pytest.raises(PatchError, match="a new file starts empty"):
        await tools["patch"].fn("new.py", None, edits)


async def test_shell_terminal_with_stages_and_stderr(tools: dict) -> None:
    command = "echo out && echo err >&2 | cat; echo 'a|b'"
    started = render(tools["shell"], "start", command)
    [terminal] = started.content
    assert terminal.command == ("echo out", "&& echo err >&2", "| cat", "; echo 'a|b'")
    sh = await tools["shell"].fn("echo out; echo err >&2; exit 2")
    await sh.wait(10)
    shown = render(tools["shell"], "success", "echo out; echo err >&2; exit 2", result=sh)
    assert shown.headline == "Run command" and shown.handle_id == sh.id
    assert shown.summary == "echo out; echo err >&2; exit 2 · exit 2"
    [terminal] = shown.content
    assert isinstance(terminal, ActivityTerminal) and terminal.exit == 2
    assert ActivityTerminalLine("err", "stderr") in terminal.lines
    assert ActivityTerminalLine("out", "stdout") in terminal.lines


def test_command_stages_respect_quotes() -> None:
    assert command_stages("a || b; c") == ("a", "|| b", "; c")
    assert command_stages('echo "x && y" | wc -l') == ('echo "x && y"', "| wc -l")
    assert command_stages("ls") == ("ls",)


async def test_a_command_is_split_only_where_that_is_certainly_right(tools: dict) -> None:
    """``;;`` of a ``case`` was taken as two ``;`` and one dropped, a ``#`` comment and a
    ``$( … )`` were split at their ``;``, and a here-document was flattened to one line: what
    was shown (and copied) was another command. Those show as written, line by line, and the
    copy is the command that ran, which bash runs as the model's did."""
    case = "x=b; case $x in a) echo A;; b) echo B;; esac"
    heredoc = "cat > t.py <<'EOF'\nprint(1)  # a; b\nEOF\npython3 t.py"
    commented = "ls  # first; then"
    substituted = 'echo "$(echo ")"; date)" && ls'
    assert command_stages(case) == (case,)
    assert command_stages(heredoc) == (
        "cat > t.py <<'EOF'",
        "print(1)  # a; b",
        "EOF",
        "python3 t.py",
    )
    assert command_stages(commented) == (commented,)
    assert command_stages(substituted) == (substituted,)
    long = "cat > big.txt <<'EOF'\n" + "line\n" * 500 + "EOF"
    shown = command_stages(long)
    assert len(shown) == 60 and shown[-1] == "… 443 more lines of the command"
    for command in (case, heredoc, commented, substituted):
        sh = await tools["shell"].fn(command)
        await sh.wait(10)
        [terminal] = render(tools["shell"], "success", command, result=sh).content
        assert terminal.command_as_run() == command
    ran = subprocess.run(["bash", "-c", case], capture_output=True, text=True, check=True)
    assert ran.stdout == "B\n"


def test_wide_or_long_arguments_still_draw_a_summary(tools: dict) -> None:
    """An Activity's line holds 512 UTF-8 bytes; a 300-character ``version`` (a model passing
    the old text where the version goes), a long path or a query of wide characters made the
    built-ins' render raise, and the row lost its summary. Each now draws one, cut."""
    wide = "検索" * 150
    error = ValueError("patch: version must be the int after '@', got " + repr("x" * 300))
    cases = [
        render(tools["patch"], "failure", "a.py", "x" * 300, [], error=error),
        render(tools["cat"], "failure", "d/" * 300 + "a.py", error=FileNotFoundError("cat: no")),
        render(tools["grep"], "failure", wide, [wide], error=ValueError(wide)),
        render(tools["run_tests"], "failure", [wide], error=RuntimeError(wide)),
    ]
    one_word = render(tools["shell"], "failure", "true", error=RuntimeError("interrupted"))
    assert one_word.summary == "true: interrupted"  # a message with no tool name before it
    for shown in cases:
        assert "…" in shown.summary, shown.summary
        assert len(shown.summary.encode()) <= 512


def test_an_outside_workspace_error_names_the_workspace_and_is_said_once(
    tools: dict, workspace: Path
) -> None:
    """A jailed ``cat('/etc/passwd')`` read "outside the workspace .;" (the workspace path,
    shortened to ``.``), and the row said the error a second time: the error's
    ``OutsideWorkspace: cat:`` prefixes were not set aside when compared with the summary."""
    from sample_turns import record

    from vis_core.extension_host.activity_paths import shorten_presentation
    from vis_core.model.activity import ActivityState, error_in_header

    message = f"cat: /etc/passwd is outside the workspace {workspace}; the jail is on"
    error = f"OutsideWorkspace: {message}"
    shown = shorten_presentation(
        render(tools["cat"], "failure", "/etc/passwd", error=RuntimeError(message)), workspace
    )
    assert f"outside the workspace {shorten_path(workspace, '/')};" in shown.summary
    failed = record("a1", shown, state=ActivityState.FAILED, tool="cat", error=error)
    assert error_in_header(failed)
