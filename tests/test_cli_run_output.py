"""`vis run` whose output cannot be written (a full disk, an I/O error) stops its turn, says
so on stderr once and exits 74, as a closed pipe exits 141: a CI job never takes a lost
answer for a completed one. A command started with stdout closed says so in one line; with
stdin closed it runs as with an empty one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import script, vis

from vis_core.store import Store

LONG = [{"code": "for i in range(20):\n    print('line', i)"}, {"text": "all done"}]
FULL = "/dev/full"  # every write fails with ENOSPC
NO_SPACE = "the output could not be written (No space left on device)"

needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")


def _turn(vis_home: Path):
    with Store(vis_home / "vis.db") as store:
        (row,) = store.list_sessions()
        (turn,) = store.turns(row.id)
    return turn


@needs_full
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_full_disk_stops_the_turn_and_the_run_exits_74(
    workspace: Path, vis_home: Path, tmp_path: Path, as_json: bool
) -> None:
    flags = ["--json"] if as_json else []
    with open(FULL, "w") as full:
        result = vis(
            "run",
            *flags,
            "--provider",
            "scripted",
            "--script",
            str(script(tmp_path, LONG)),
            "x",
            cwd=workspace,
            env_home=vis_home,
            stdout=full,
        )
    assert result.returncode == 74, result.stderr
    assert result.stderr.count(NO_SPACE) == 1, result.stderr
    assert "Traceback" not in result.stderr
    turn = _turn(vis_home)
    assert str(turn.status) == "cancelled"
    assert turn.error == "the output could not be written: No space left on device"


@needs_full
def test_a_commands_output_on_a_full_disk_exits_74_without_a_traceback(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    with open(FULL, "w") as full:
        result = vis(
            "run",
            "--provider",
            "scripted",
            "--script",
            str(script(tmp_path, [{"text": "ok"}])),
            "/goal",
            cwd=workspace,
            env_home=vis_home,
            stdout=full,
        )
    assert result.returncode == 74, result.stderr
    assert NO_SPACE in result.stderr and "Traceback" not in result.stderr


def test_a_closed_pipe_is_recorded_as_the_readers_leaving(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        result = vis(
            "run",
            "--provider",
            "scripted",
            "--script",
            str(script(tmp_path, LONG)),
            "x",
            cwd=workspace,
            env_home=vis_home,
            stdout=write,
        )
    finally:
        os.close(write)
    assert result.returncode == 141, result.stderr
    turn = _turn(vis_home)
    assert str(turn.status) == "cancelled"
    assert turn.error == "the program reading the output closed it"


def _closing(fd: int):
    return lambda: os.close(fd)  # in the child, before vis starts: `vis … >&-`, `<&-`


@pytest.mark.parametrize("command", ["run", "sessions", "doctor"])
def test_a_closed_stdout_is_said_in_one_line(
    workspace: Path, vis_home: Path, tmp_path: Path, command: str
) -> None:
    model = ["--provider", "scripted", "--script", str(script(tmp_path, [{"text": "ok"}]))]
    args = [command, *model, "x"] if command == "run" else [command]
    result = vis(*args, cwd=workspace, env_home=vis_home, preexec_fn=_closing(1))
    assert result.returncode == 2
    assert result.stderr == (
        "vis: standard output is closed; send it to a file or discard it (> /dev/null)\n"
    )


def test_a_closed_stdin_runs_as_an_empty_one(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    model = ["--provider", "scripted", "--script", str(script(tmp_path, [{"text": "ok"}]))]
    result = vis("run", *model, "x", cwd=workspace, env_home=vis_home, preexec_fn=_closing(0))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n" and "Traceback" not in result.stderr
    piped = vis("run", *model, "-", cwd=workspace, env_home=vis_home, preexec_fn=_closing(0))
    assert piped.returncode == 2 and "standard input was empty" in piped.stderr
