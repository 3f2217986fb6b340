"""``vis replay``: a session recorded with ``vis run`` re-run against a copy of its workspace."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from cli_support import script, vis

from vis_core.events import (
    AssistantMessage,
    AssistantThinking,
    IterationStarted,
    SessionCreated,
    TurnEnded,
    TurnStarted,
)
from vis_core.model.turn import TurnStatus
from vis_core.paths import VisPaths
from vis_core.session_cli.replay import REPLAYED_FAILURE, Difference, script_of
from vis_core.store import Store
from vis_core.store.stored_session import read_session

EDIT = (  # works once: it needs the text it replaces
    'text = open("notes.txt").read()\nassert "draft" in text, text\n'
    'open("notes.txt", "w").write(text.replace("draft", "final"))\nprint("edited")'
)
EDIT_AND_RUN = [
    {"text": "Editing.", "code": EDIT},
    {"code": 'print(int(open("data.txt").read()) * 2)\nr = await cat("data.txt")'},
    {"text": "Six."},
]


def test_a_recorded_session_replays_identical_then_names_what_changed(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (workspace / "data.txt").write_text("3\n", encoding="utf-8")
    (workspace / "notes.txt").write_text("a draft\n", encoding="utf-8")
    recorded = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script(tmp_path, EDIT_AND_RUN)),
        "double it",
        cwd=workspace,
        env_home=vis_home,
    )
    assert recorded.returncode == 0, recorded.stderr
    listed = vis("sessions", cwd=workspace, env_home=vis_home).stdout
    session_id = listed.split()[0]
    # the replay starts the files the session changed as they were before it, in a copy
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "a final\n"
    kept = sorted(p.name for p in vis_home.glob("*/*"))

    same = vis("replay", session_id, cwd=workspace, env_home=vis_home)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "(1 turn, 2 blocks)" in same.stdout and "identical." in same.stdout
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "a final\n"  # not the live one
    assert vis("sessions", cwd=workspace, env_home=vis_home).stdout == listed  # none left behind
    assert sorted(p.name for p in vis_home.glob("*/*")) == kept  # nor its checkpoints, outputs

    (workspace / "data.txt").write_text("5\n", encoding="utf-8")
    changed = vis("replay", session_id, "--json", cwd=workspace, env_home=vis_home)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    report = json.loads(changed.stdout)
    assert report["identical"] is False
    assert report["differences"] == [
        {
            "turn": 1,
            "block": 2,
            "what": "output",
            "expected": 'line 1: "6"',
            "now": 'line 1: "10"',
        }
    ]
    unknown = vis("replay", "feedbeef", "--json", cwd=workspace, env_home=vis_home)
    assert unknown.returncode == 2 and "vis replay: there is no session 'feedbeef'" in (
        unknown.stderr
    )


def test_the_script_holds_each_request_answer_in_order(workspace: Path) -> None:
    """Thinking, a direct tool call, an empty final answer, a failed turn (its partial text
    streamed before the failure) kept in line; a person's !command asks no model."""
    store = Store(VisPaths.from_env().ensure().db_file)
    sid = store.create_session(workspace, workspace).id
    store.append_many(
        [
            SessionCreated(sid),
            TurnStarted(sid, turn_id="t1", position=1, request="look"),
            AssistantThinking(sid, turn_id="t1", iteration=0, text="hmm"),
            AssistantMessage(sid, turn_id="t1", iteration=0, text="Searching."),
            IterationStarted(
                sid, turn_id="t1", iteration_id="c1", index=1, tool="grep", arguments={"q": "x"}
            ),
            IterationStarted(sid, turn_id="t1", iteration_id="c2", index=2, code="print(1)"),
            TurnEnded(sid, turn_id="t1", status=TurnStatus.COMPLETED),
            TurnStarted(sid, turn_id="t2", position=2, request="again"),
            AssistantMessage(sid, turn_id="t2", iteration=0, text="Partial", incomplete="failed"),
            TurnEnded(sid, turn_id="t2", status=TurnStatus.FAILED, error="model request failed"),
            TurnStarted(sid, turn_id="t3", position=3, request="!ls"),
            TurnEnded(sid, turn_id="t3", status=TurnStatus.COMPLETED),
        ]
    )
    row = store.get_session(sid)
    assert row is not None
    assert script_of(read_session(store, row)) == [
        {
            "text": "Searching.",
            "thinking": "hmm",
            "tool": {"name": "grep", "arguments": {"q": "x"}},
        },
        {"text": "", "code": "print(1)"},
        {"text": ""},
        {"text": "Partial", "error": {"status": 400, "message": REPLAYED_FAILURE}},
    ]


def test_a_difference_reads_as_place_expected_and_now() -> None:
    line = Difference(1, 2, "output", 'line 1: "6"', 'line 1: "10"').line()
    assert line == 'turn 1, block 2: output\n  expected: line 1: "6"\n  now:      line 1: "10"'


GREETER = """
import vis_core.extension as vis

def greet(name: str) -> str:
    "Greet someone."
    return f"hello {name} from the project"

vis.register_extension(
    vis.Extension(
        name="greeter", alias="greeter", description="Greets.", symbols=[vis.Symbol(greet)]
    )
)
"""


def test_a_trusted_projects_extensions_load_in_the_replay_an_untrusted_ones_do_not(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    from vis_core.paths import TrustStore

    (workspace / ".vis" / "extensions").mkdir(parents=True)
    (workspace / ".vis" / "extensions" / "greeter.py").write_text(GREETER, encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)
    steps = [{"code": "print(await greeter.greet('Ada'))"}, {"text": "Greeted."}]
    run = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script(tmp_path, steps)),
        "greet",
        cwd=workspace,
        env_home=vis_home,
    )
    assert run.returncode == 0, run.stderr
    session_id = vis("sessions", cwd=workspace, env_home=vis_home).stdout.split()[0]
    trusted_list = VisPaths.from_env().trust_file.read_text(encoding="utf-8")

    same = vis("replay", session_id, "--json", cwd=workspace, env_home=vis_home)
    assert same.returncode == 0, same.stdout + same.stderr
    report = json.loads(same.stdout)
    assert report["identical"] and report["project"].startswith("the trusted project's")
    assert "extensions and MCP servers loaded" in same.stderr
    assert VisPaths.from_env().trust_file.read_text(encoding="utf-8") == trusted_list  # as it was

    TrustStore(VisPaths.from_env()).forget(workspace)
    skipped = vis("replay", session_id, "--json", cwd=workspace, env_home=vis_home)
    assert skipped.returncode == 1, skipped.stdout + skipped.stderr
    report = json.loads(skipped.stdout)
    assert "is not trusted: its extensions and MCP servers were skipped" in report["project"]
    first = report["differences"][0]
    assert first["what"] == "output" and "hello Ada from the project" in first["expected"]


def test_a_block_whose_output_was_saved_or_that_printed_a_command_replays_identical(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """A block printing over 50 KB (its full output saved to a file named by session, time
    and a random part) or a shell handle (with its pid) never replayed identical: `vis
    replay` in CI failed for every such session (found by a tester). Then one whose kept
    tail held a pid or the workspace's path did not either: the truncation note counts the
    tail's bytes, more or fewer with a pid of another width or the copy's path."""
    code = (
        'import os\nprint("Z" * 60000)\nprint(os.getcwd())\n'
        'print(await shell("sleep 30"))'  # running when printed, both times
    )
    path = script(tmp_path, [{"code": code}, {"text": "ok"}])
    done = vis(
        "run", "--provider", "scripted", "--script", str(path), "print a lot",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    session_id = vis("sessions", cwd=workspace, env_home=vis_home).stdout.split()[0]
    with Store(VisPaths.from_env().db_file) as store:
        row = store.latest_session(workspace)
        assert row is not None
        (block,) = read_session(store, row).turns[0].blocks
    assert "Full output saved to" in block.stdout and "pid " in block.stdout
    same = vis("replay", session_id, cwd=workspace, env_home=vis_home)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "identical." in same.stdout


def _record(workspace: Path, vis_home: Path, tmp_path: Path, steps: list[dict[str, str]]) -> str:
    """The id of a session ``vis run`` recorded in ``workspace`` with the model's ``steps``."""
    run = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script(tmp_path, steps)),
        "go",
        cwd=workspace,
        env_home=vis_home,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return vis("sessions", cwd=workspace, env_home=vis_home).stdout.split()[0]


def test_the_copy_keeps_a_sparse_files_holes_and_refuses_a_file_too_large(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before, the replay's copy (shutil.copytree) wrote every zero of a sparse file: a
    600 MiB file taking 1 MiB in the workspace took 600 MiB in /tmp, with no bound. The
    block measures the file where it runs: in the workspace when recorded, in the copy
    when replayed."""
    with (workspace / "data.bin").open("wb") as out:
        out.write(b"data")
        out.truncate(200 << 20)
    measure = 'import os\nst = os.stat("data.bin")\nprint(st.st_size, st.st_blocks * 512 < 1 << 20)'
    session_id = _record(workspace, vis_home, tmp_path, [{"code": measure}, {"text": "Measured."}])

    same = vis("replay", session_id, "--json", cwd=workspace, env_home=vis_home)
    assert same.returncode == 0, same.stdout + same.stderr  # was "209715200 False" in the copy
    assert json.loads(same.stdout)["identical"]

    with (workspace / "big.img").open("wb") as out:
        out.truncate(300 << 20)  # over the 256 MiB a copy takes of one file
    refused = vis("replay", session_id, cwd=workspace, env_home=vis_home)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith(
        f"vis replay: cannot copy the workspace {workspace}: big.img is 300.0 MB, over the "
        "256.0 MB vis replay copies or compares of one file; move it out of the workspace"
    )
    assert "Traceback" not in refused.stderr


def test_a_named_pipe_and_a_socket_are_left_out_of_the_copy_and_said(
    workspace: Path, vis_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a pipe a block made (os.mkfifo, which the jail allows) stopped `vis replay`
    with shutil.Error's traceback ('… is a named pipe'), and a socket likewise. Neither is
    opened (opening a pipe waits for a writer): each is left out of the copy, and said."""
    made = 'import os\nos.mkfifo("pipe")\nprint("made")'
    session_id = _record(workspace, vis_home, tmp_path, [{"code": made}, {"text": "Made."}])
    assert (workspace / "pipe").is_fifo()
    monkeypatch.chdir(workspace)  # a socket's path is short: relative
    listening = socket.socket(socket.AF_UNIX)
    listening.bind("sock")
    try:
        replayed = vis("replay", session_id, "--json", cwd=workspace, env_home=vis_home)
    finally:
        listening.close()

    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["identical"] and report["left_out"] == ["pipe", "sock"]
    assert (
        "vis replay: left out of the copy (a named pipe, socket or device, never opened): "
        "pipe, sock\n" in replayed.stderr
    )
    assert (workspace / "pipe").is_fifo() and os.path.exists(workspace / "sock")


def _git_repo(root: Path) -> Path:
    """``root`` as a git repository with one commit (a draft there is a worktree)."""
    import subprocess

    root.mkdir(parents=True, exist_ok=True)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"]):
        (root / "base.txt").write_text("base\n", encoding="utf-8")
        subprocess.run(["git", *args], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init"],
        cwd=root,
        check=True,
    )
    return root


def _head(root: Path) -> str:
    import subprocess

    done = subprocess.run(["git", "log", "--format=%H %s"], cwd=root, capture_output=True)
    return done.stdout.decode()


IN_A_DRAFT = [
    {
        "code": 'd = await draft_create("feature")\n'
        'open("feature.txt", "w").write("wip\\n")\nprint("in draft")'
    },
    {"text": "Work is in draft feature; approve it when ready."},
]


def test_a_replay_leaves_no_draft_behind(workspace: Path, vis_home: Path, tmp_path: Path) -> None:
    """Before, each replay of a session that made a draft left that draft behind, made from
    the replay's deleted copy, which no command of Vis could remove (found by a tester;
    tests/drafts/test_cli.py removes such a draft now)."""
    _git_repo(workspace)
    session_id = _record(workspace, vis_home, tmp_path, IN_A_DRAFT)
    discarded = vis("drafts", "discard", "feature", cwd=workspace, env_home=vis_home)
    assert discarded.returncode == 0, discarded.stderr

    same = vis("replay", session_id, cwd=workspace, env_home=vis_home)
    assert same.returncode == 0 and "identical." in same.stdout, same.stdout + same.stderr
    assert vis("drafts", cwd=workspace, env_home=vis_home).stdout == "No drafts.\n"
    assert not any((vis_home / "drafts").iterdir())


def test_the_replay_runs_jailed_whatever_the_jail_setting(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before, with the jail setting off, a replay ran the model's recorded code unconfined:
    a block writing the live workspace by its absolute path wrote it again (found by a
    tester). Now the replay is jailed (the live file is not there to see); `--unjailed`
    runs it unconfined, saying what that risks; where the jail cannot run, it is refused."""
    live = workspace / "data.txt"
    live.write_text("live v1\n", encoding="utf-8")
    code = f"p = {str(live)!r}\nprint(open(p).read().strip())\nopen(p, 'a').write('again\\n')"
    run = vis(
        "run", "--toggles", "jail=false", "--provider", "scripted",
        "--script", str(script(tmp_path, [{"code": code}, {"text": "appended"}])), "append",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    session_id = vis("sessions", cwd=workspace, env_home=vis_home).stdout.split()[0]
    live.write_text("live v1\n", encoding="utf-8")
    off = vis("settings", "set", "jail", "false", cwd=workspace, env_home=vis_home)
    assert off.returncode == 0, off.stdout + off.stderr

    jailed = vis("replay", session_id, "--json", cwd=workspace, env_home=vis_home)
    assert jailed.returncode == 1, jailed.stdout + jailed.stderr
    assert live.read_text(encoding="utf-8") == "live v1\n"  # was "live v1\nagain\n"
    errors = [d["now"] for d in json.loads(jailed.stdout)["differences"] if d["what"] == "error"]
    assert errors and "FileNotFoundError" in errors[0]

    bin_without_bwrap = tmp_path / "bin"
    bin_without_bwrap.mkdir()
    refused = vis(
        "replay", session_id, cwd=workspace, env_home=vis_home,
        extra_env={"PATH": str(bin_without_bwrap)},
    )  # fmt: skip
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith(
        "vis replay: the replay runs the model's recorded code in the jail, so that it "
        "touches only a copy of the workspace, and the jail cannot run here: bubblewrap"
    )
    assert "`vis replay --unjailed` runs it anyway" in refused.stderr
    assert live.read_text(encoding="utf-8") == "live v1\n"

    unjailed = vis("replay", "--unjailed", session_id, cwd=workspace, env_home=vis_home)
    assert unjailed.returncode == 0 and "identical." in unjailed.stdout, unjailed.stderr
    assert "vis replay: --unjailed: the session's recorded blocks and shell commands run " in (
        unjailed.stderr
    )
    assert live.read_text(encoding="utf-8") == "live v1\nagain\n"  # what it said it risks


def _record_with(
    workspace: Path, vis_home: Path, tmp_path: Path, steps: list[dict[str, str]], *flags: str
) -> tuple[int, str]:
    """``vis run FLAGS`` with the model's ``steps``: its exit status and the session's id."""
    path = str(script(tmp_path, steps))
    run = vis(
        "run", *flags, "--provider", "scripted", "--script", path, "go",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    session_id = vis("sessions", cwd=workspace, env_home=vis_home).stdout.split()[0]
    return run.returncode, session_id


def _replays_identical(workspace: Path, vis_home: Path, session_id: str) -> None:
    same = vis("replay", session_id, cwd=workspace, env_home=vis_home)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "identical." in same.stdout
    assert vis("drafts", cwd=workspace, env_home=vis_home).stdout == "No drafts.\n"


def test_a_turn_stopped_by_its_iteration_limit_replays_identical(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before: 'status expected: max_iterations … now: failed (… script exhausted …)', the
    replay running past the limit `vis run --max-turns` gave (found by a tester)."""
    steps = [{"code": "print(1)"}, {"code": "print(2)"}, {"text": "fin"}]
    status, session_id = _record_with(workspace, vis_home, tmp_path, steps, "--max-turns", "1")
    assert status == 3
    _replays_identical(workspace, vis_home, session_id)


def test_a_turn_in_plan_mode_replays_in_plan_mode(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before: recorded 'refused OSError', replayed 'wrote' (plan mode was not restored)."""
    code = (
        'try:\n    open("b.txt", "w").write("x")\n    print("wrote")\n'
        "except OSError as e:\n    print('refused', type(e).__name__)"
    )
    status, session_id = _record_with(
        workspace, vis_home, tmp_path, [{"code": code}, {"text": "planned"}], "--plan"
    )
    assert status == 0
    _replays_identical(workspace, vis_home, session_id)


def test_a_run_in_a_draft_that_the_model_approved_replays_identical(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before: 'DraftError: this session is not in a draft' (`vis run --draft` was not
    restored), and 'vis run does not approve drafts unless --allow-approve is given'. The
    approval's commit is on the live branch: the copy's branch starts from before it."""
    _git_repo(workspace)
    approve = (
        'open("m.txt", "w").write("m\\n")\nr = await draft_approve("add m.txt")\n'
        'print(r["files"], r["label"])'
    )
    steps = [{"code": approve}, {"text": "done"}]
    flags = ("--draft", "--allow-approve")
    status, session_id = _record_with(workspace, vis_home, tmp_path, steps, *flags)
    assert status == 0
    committed = _head(workspace)
    assert "add m.txt" in committed
    _replays_identical(workspace, vis_home, session_id)  # from before the approval's commit
    assert _head(workspace) == committed  # in the copy only


def test_a_draft_the_model_made_and_approved_replays_identical(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before: approval refused in the replay, and outputs differing by the draft's random
    folder ('The sandbox process moved to …/drafts/<id>/tree'), label and commit."""
    _git_repo(workspace)
    steps = [
        {"code": 'd = await draft_create()\nopen("n.txt", "w").write("n\\n")\nprint(d)'},
        {"code": 'r = await draft_approve("add n.txt")\nprint(r)'},
        {"text": "done"},
    ]
    status, session_id = _record_with(workspace, vis_home, tmp_path, steps, "--allow-approve")
    assert status == 0
    committed = _head(workspace)
    _replays_identical(workspace, vis_home, session_id)
    assert _head(workspace) == committed


def test_a_link_the_session_re_pointed_is_put_back_before_the_replay(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """The copy's links the session changed were removed, not put back: a block that read a
    link it then re-pointed failed in the replay. They are made again with their targets
    then (from the checkpoints), as files are."""
    (workspace / "current").symlink_to("v1")
    code = (
        'import os\nprint(os.readlink("current"))\nos.remove("current")\n'
        'os.symlink("v2", "current")\nos.symlink("v3", "made")'
    )
    session_id = _record(workspace, vis_home, tmp_path, [{"code": code}, {"text": "ok"}])
    assert os.readlink(workspace / "current") == "v2"
    same = vis("replay", session_id, cwd=workspace, env_home=vis_home)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "identical." in same.stdout
    assert os.readlink(workspace / "current") == "v2"  # the live workspace is not touched
