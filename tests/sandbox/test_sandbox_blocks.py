"""Blocks in a real child process: persistence, await, errors, output bounds, metadata."""

from __future__ import annotations

import asyncio
from pathlib import Path

from vis_core.extension.metadata import build_metadata
from vis_core.sandbox import Sandbox

from .conftest import MakeSandbox


async def test_variables_and_functions_persist_between_blocks(sandbox: Sandbox) -> None:
    first = await sandbox.run("total = 40\ndef bump(n):\n    return n + 2\n")
    assert first.error is None and first.restarted is None
    second = await sandbox.run("print(bump(total))")
    assert second.stdout == "42\n"
    assert second.error is None


async def test_top_level_await_and_no_echo_of_trailing_expression(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "import asyncio\nawait asyncio.sleep(0)\nvalue = await asyncio.gather(*(asyncio.sleep(0, i)"
        " for i in range(3)))\nprint(value)\nvalue\n'not printed'\n"
    )
    assert result.error is None
    assert result.stdout == "[0, 1, 2]\n"


async def test_exception_shows_the_users_line_not_sandbox_internals(sandbox: Sandbox) -> None:
    result = await sandbox.run("x = 1\ndef inner():\n    return {}['missing']\n\ninner()\n")
    assert result.error is not None
    assert 'File "<block 1>", line 5, in <module>' in result.error
    assert 'File "<block 1>", line 3, in inner' in result.error
    assert "return {}['missing']" in result.error
    assert result.error.rstrip().endswith("KeyError: 'missing'")
    assert "vis_core" not in result.error and "asyncio" not in result.error
    after = await sandbox.run("print(x)")  # the namespace survives the error
    assert after.stdout == "1\n"


async def test_syntax_error_and_system_exit_keep_the_sandbox(sandbox: Sandbox) -> None:
    bad = await sandbox.run("def broken(:\n    pass\n")
    assert bad.error is not None and "SyntaxError" in bad.error
    leaving = await sandbox.run("import sys\nprint('bye')\nsys.exit(3)")
    assert leaving.stdout == "bye\n"
    assert leaving.error is not None and "SystemExit: 3" in leaving.error
    still = await sandbox.run("print('here')")
    assert still.stdout == "here\n" and still.restarted is None


async def test_stdout_and_stderr_are_captured_in_order(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "import sys, subprocess\nprint('one')\nprint('two', file=sys.stderr)\n"
        "subprocess.run([sys.executable, '-c', 'print(\"three\")'], check=True)\nprint('four')\n"
    )
    assert result.stdout == "one\ntwo\nthree\nfour\n"


async def test_printed_output_is_bounded_with_the_tail_kept(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    box = make_sandbox(output_limit=1_000, output_dir=tmp_path / "outputs")
    result = await box.run("for i in range(5000):\n    print(f'line {i:05d}')\nprint('END')")
    note, _, tail = result.stdout.partition("\n\n")
    # whole lines from the end within 1,000 bytes: 90 lines of 11 bytes and END
    assert note.startswith("[Output truncated: showing the last 91 of 5,001 lines")
    assert tail == "".join(f"line {i:05d}\n" for i in range(4910, 5000)) + "END\n"
    saved = Path(note.split("Full output saved to: ")[1].rstrip("]"))
    expected = "".join(f"line {i:05d}\n" for i in range(5000)) + "END\n"
    assert saved.read_text() == expected


async def test_printed_output_is_cut_at_2000_lines(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox()
    result = await box.run("for i in range(2500):\n    print(i)")
    note, _, tail = result.stdout.partition("\n\n")
    assert note.startswith("[Output truncated: showing the last 2,000 of 2,500 lines")
    assert "The full output was not saved" in note  # this sandbox has no output folder
    assert tail.splitlines()[0] == "500" and tail.endswith("2499\n")
    short = await box.run("print('small')")
    assert short.stdout == "small\n"


async def test_error_text_is_bounded_too(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox(output_limit=500)
    result = await box.run("raise ValueError('x' * 5000 + 'THE END')")
    assert result.error is not None
    assert "earlier characters cut]" in result.error
    assert result.error.rstrip().endswith("THE END")


async def test_build_metadata_and_passed_globals(make_sandbox: MakeSandbox) -> None:
    box = make_sandbox(globals={"PROJECT": "demo", "LIMITS": {"lines": 3}})
    result = await box.run(
        "print(VIS_VERSION, VIS_PYTHON_SDK_VERSION, VIS_SHA_RELEASE)\n"
        "print(VIS_PYTHON_RUNTIME_VERSION == VIS_VERSION)\n"
        "print(PROJECT, LIMITS['lines'])\n"
    )
    assert result.error is None
    lines = result.stdout.splitlines()
    meta = build_metadata()
    assert lines[0] == (
        f"{meta['VIS_VERSION']} {meta['VIS_PYTHON_SDK_VERSION']} {meta['VIS_SHA_RELEASE']}"
    )
    assert lines[1:] == ["True", "demo 3"]


async def test_duration_is_reported(sandbox: Sandbox) -> None:
    result = await sandbox.run("pass")
    assert result.duration > 0


def test_release_sha_is_a_full_commit_or_none() -> None:
    import re

    sha = build_metadata()["VIS_SHA_RELEASE"]
    assert sha is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", sha)


async def test_what_a_running_block_printed_so_far_is_seen_before_it_ends(
    sandbox: Sandbox,
) -> None:
    """Its last lines, as a terminal shows them (a line redrawn with \\r shows its last draw);
    between blocks, nothing."""
    go = sandbox.workspace / "go"
    block = asyncio.ensure_future(
        sandbox.run(
            "import os, sys, time\nprint('one')\nprint('two', file=sys.stderr)\n"
            "print('fetching 10%\\rfetching 90%', flush=True)\n"
            "while not os.path.exists('go'):\n    time.sleep(0.01)\nprint('end')\n"
        )
    )
    try:
        for _ in range(3000):  # until the child's output reached the host (no time asserted)
            if sandbox.printed(2) == "two\nfetching 90%" or block.done():
                break
            await asyncio.sleep(0.01)
        assert sandbox.printed(2) == "two\nfetching 90%"
        assert sandbox.printed(9) == "one\ntwo\nfetching 90%"
    finally:
        go.write_text("")
    result = await block
    assert result.stdout.endswith("end\n") and sandbox.printed(3) == ""


def test_the_tail_of_printed_text_is_its_last_whole_lines() -> None:
    from vis_core.sandbox.output import TailBuffer

    buffer = TailBuffer()
    assert buffer.tail(3) == ""
    for part in ("a\nb", "\nc\n", "d\r\n", "x" * 10_000):
        buffer.add(part)
    assert buffer.tail(2) == "x" * 4096  # from the last 4,096 characters at most
    assert buffer.tail(2, chars=10**6) == "d\n" + "x" * 10_000
    assert buffer.tail(9, chars=10**6).startswith("a\nb\nc\nd\n")


def test_a_running_blocks_tail_draws_a_redrawn_line_as_a_terminal_does() -> None:
    """A line redrawn with carriage returns shows its last draw over what it did not cover
    (``50%`` over ``progress 10%`` reads ``50%gress 10%`` on a terminal), as the block's
    row shows it once it ended."""
    from vis_core.sandbox.output import TailBuffer

    buffer = TailBuffer()
    buffer.add("start\nprogress 10%\r50%\n")
    assert buffer.tail(2) == "start\n50%gress 10%"


def test_what_was_printed_since_a_mark_is_its_end_after_a_note_of_the_cut() -> None:
    """A running block's output is committed a stretch at a time: what it printed after the
    last stretch, at most its last ``most`` characters, the cut said (also of what the
    buffer no longer keeps)."""
    from vis_core.sandbox.output import TailBuffer, cut_note

    buffer = TailBuffer()
    assert buffer.since(0, 10) == ""
    buffer.add("tick 0\n")
    buffer.add("tick 1\n")
    mark = buffer.total
    assert buffer.since(0, 100) == "tick 0\ntick 1\n"
    assert buffer.since(mark, 100) == ""
    buffer.add("tick 2\n" + "x" * 50)
    assert buffer.since(mark, 100) == "tick 2\n" + "x" * 50
    assert buffer.since(mark, 10) == cut_note(47) + "x" * 10
    small = TailBuffer(limit=8, kept=8)  # keeps 8 characters (and the part holding them)
    for part in ("aaaa", "bbbb", "cccc", "dddd"):
        small.add(part)
    assert small.since(0, 100) == cut_note(8) + "ccccdddd"
