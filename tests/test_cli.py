"""`vis` on the command line: version, print mode exit codes, JSON events, kills and interrupts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_support import script, vis
from warm_servers import vis_command

from vis_core import __version__


def test_version(workspace, vis_home):
    result = vis("--version", cwd=workspace, env_home=vis_home)
    assert result.returncode == 0
    assert result.stdout.strip() == f"vis {__version__}"


def test_run_without_a_model_says_how_to_configure_one(workspace, vis_home):
    result = vis("run", "hello", cwd=workspace, env_home=vis_home)
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "config.toml" in result.stderr


def test_run_streams_the_answer_and_one_line_per_activity(workspace, vis_home, tmp_path):
    (workspace / "a.txt").write_text("hello\n")
    s = script(tmp_path, [{"code": 'print(await cat("a.txt"))'}, {"text": "It says hello."}])
    result = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "read a.txt",
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 0, result.stderr
    assert "It says hello." in result.stdout
    assert "Read file" in result.stdout
    assert result.stdout.rstrip().endswith("1 observation")  # the turn's step counts


REVIEWER = """
import vis_core.extension as vis


def review(path: str) -> str:
    \"\"\"Read a file through the session's own cat.\"\"\"
    return str(vis.tools.cat(path))


vis.register_extension(vis.Extension(
    name="reviewer", description="Reviews files.", alias="reviewer", symbols=[vis.Symbol(review)],
))
"""


def test_run_indents_the_calls_an_extension_tool_made(workspace, vis_home, tmp_path):
    (workspace / "a.txt").write_text("hello\n")
    (vis_home / "extensions").mkdir(parents=True, exist_ok=True)
    (vis_home / "extensions" / "reviewer.py").write_text(REVIEWER, encoding="utf-8")
    s = script(tmp_path, [{"code": 'print(await reviewer.review("a.txt"))'}, {"text": "Done."}])
    result = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "review a.txt",
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    read = next(line for line in lines if "Read file" in line)
    review = next(line for line in lines if line.lstrip("✓ ").startswith("review"))
    assert read.startswith("  ✓") and review.startswith("✓")  # the call, under its tool
    assert lines.index(read) < lines.index(review)  # printed as each ends
    assert result.stdout.rstrip().endswith("2 observations")


def test_summarize_steps_off_drops_the_step_line(workspace, vis_home, tmp_path):
    (workspace / "a.txt").write_text("hello\n")
    (vis_home / "config.toml").write_text("summarize_steps = false\n", encoding="utf-8")
    s = script(tmp_path, [{"code": 'print(await cat("a.txt"))'}, {"text": "It says hello."}])
    result = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "read a.txt",
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 0, result.stderr
    assert "Read file" in result.stdout and "observation" not in result.stdout


def test_run_json_prints_events(workspace, vis_home, tmp_path):
    s = script(tmp_path, [{"text": "hi there"}])
    result = vis(
        "run",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "hi",
        cwd=workspace,
        env_home=vis_home,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "TurnStarted" and types[-1] == "TurnEnded"
    assert events[-1]["status"] == "completed" and events[-1]["content"] == "hi there"


def test_run_dash_reads_the_request_from_standard_input(workspace, vis_home, tmp_path):
    """`git diff | vis run -` sent the one character '-' as the request (the session was
    titled '-'); '-' now reads the request from standard input, and an empty one is refused,
    as an empty request is."""
    s = script(tmp_path, [{"text": "Read it."}])
    args = ("run", "--json", "--provider", "scripted", "--script", str(s), "-")
    piped = "review this diff\n+ added line ✓\n"
    result = vis(*args, cwd=workspace, env_home=vis_home, input=piped)
    assert result.returncode == 0, result.stderr
    started = json.loads(result.stdout.splitlines()[0])
    assert started["type"] == "TurnStarted" and started["request"] == piped
    empty = vis(*args, cwd=workspace, env_home=vis_home, input="  \n")
    assert empty.returncode == 2 and "standard input was empty" in empty.stderr
    assert empty.stdout == ""
    # an empty request (`vis run "$UNSET"`) is refused too, before any model is asked
    blank = vis(*args[:-1], " ", cwd=workspace, env_home=vis_home)
    assert blank.returncode == 2 and "the request is empty" in blank.stderr
    assert blank.stdout == ""


def _to_a_reader_gone(workspace: Path, vis_home: Path, *args: str) -> subprocess.CompletedProcess:
    """``vis ARGS`` writing to a pipe whose reader is gone before Vis writes its first line."""
    from cli_support import seed_caches

    seed_caches(vis_home)
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    try:
        return subprocess.run(
            [*vis_command(env=env), *args],
            cwd=workspace, env=env, stdout=write_end, stderr=subprocess.PIPE, text=True,
            timeout=120,
        )  # fmt: skip
    finally:
        os.close(write_end)


def test_a_reader_that_stops_reading_ends_vis_quietly(workspace, vis_home):
    """`vis doctor | head -1` (or `vis sessions | head`) ended with Python's BrokenPipeError
    traceback: the reader had closed the pipe. Vis now ends quietly with SIGPIPE's status."""
    done = _to_a_reader_gone(workspace, vis_home, "doctor")
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 128 + signal.SIGPIPE


def test_a_run_whose_reader_left_ends_its_turn_saved(workspace, vis_home, tmp_path):
    """`vis run … | head -1`: Rich answered the closed pipe with SystemExit(1), so the run
    ended with status 1 and its turn stayed 'running' in the store. The turn now ends as
    cancelled (saved, as Ctrl+C leaves it) and the run exits with SIGPIPE's status."""
    s = script(
        tmp_path, [{"text": "many", "code": "for i in range(300): print(i)"}, {"text": "end"}]
    )
    done = _to_a_reader_gone(
        workspace, vis_home, "run", "--provider", "scripted", "--script", str(s), "count"
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 128 + signal.SIGPIPE, done.stderr
    exported = vis("export", "--format", "json", cwd=workspace, env_home=vis_home)
    events = json.loads(exported.stdout)["events"]
    assert [e["status"] for e in events if e["type"] == "TurnEnded"] == ["cancelled"]


def test_a_workspace_that_is_not_a_folder_is_refused(workspace, vis_home, tmp_path):
    """`vis -C /typo run …` ran the turn with a workspace that does not exist (and the app
    opened on it; doctor printed a FileNotFoundError traceback): Vis now says so and stops."""
    s = script(tmp_path, [{"text": "ok"}])
    missing = tmp_path / "typo"
    run = ("run", "--provider", "scripted", "--script", str(s), "hi")
    for args in (("-C", str(missing), *run), ("-C", str(missing), "doctor")):
        done = vis(*args, cwd=workspace, env_home=vis_home)
        assert done.returncode == 2, done.stdout
        assert done.stderr.strip() == f"vis: the workspace {missing} does not exist (-C FOLDER)"
        assert done.stdout == ""
    file = workspace / "notes.txt"
    file.write_text("x")
    done = vis("-C", str(file), *run, cwd=workspace, env_home=vis_home)
    assert done.returncode == 2 and "notes.txt is not a folder" in done.stderr


def test_failed_turn_exits_1(workspace, vis_home, tmp_path):
    s = script(tmp_path, [{"error": {"status": 401, "message": "bad key"}}])
    result = vis(
        "run", "--provider", "scripted", "--script", str(s), "hi", cwd=workspace, env_home=vis_home
    )
    assert result.returncode == 1


def test_scripted_without_script_is_a_usage_error(workspace, vis_home):
    result = vis("run", "--provider", "scripted", "hi", cwd=workspace, env_home=vis_home)
    assert result.returncode == 2
    assert "--script" in result.stderr


def _start(workspace: Path, vis_home: Path, s: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vis_core.cli",
            "run",
            "--json",
            "--provider",
            "scripted",
            "--script",
            str(s),
            "go",
        ],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_until(proc: subprocess.Popen[str], event_type: str) -> list[dict]:
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(json.loads(line))
        if seen[-1]["type"] == event_type:
            return seen
    raise AssertionError(f"never saw {event_type}: {seen}")


def test_sigint_cancels_the_turn_and_exits_130(workspace, vis_home, tmp_path):
    s = script(tmp_path, [{"text": "x" * 400, "chunk": 1, "delay_ms": 20}])
    proc = _start(workspace, vis_home, s)
    _read_until(proc, "AssistantDelta")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 130


def test_sigkill_mid_turn_keeps_every_committed_event(workspace, vis_home, tmp_path):
    from vis_core.store import Store

    s = script(
        tmp_path,
        [{"code": "print('first block')"}, {"text": "y" * 400, "chunk": 1, "delay_ms": 20}],
    )
    proc = _start(workspace, vis_home, s)
    printed = _read_until(proc, "BlockFinished")
    proc.kill()
    proc.wait(timeout=10)

    store = Store(vis_home / "vis.db")
    try:
        (session,) = store.list_sessions()
        stored = [e.event.to_dict() for e in store.events(session.id)]
    finally:
        store.close()
    for event in printed:
        if event["type"] != "AssistantDelta":
            assert event in stored
    assert stored[-1]["type"] == "BlockFinished"
    assert "first block" in stored[-1]["stdout"]


def test_doctor_lists_extensions_and_reports_a_broken_one(workspace, vis_home):
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "broken.py").write_text("def oops(:\n", encoding="utf-8")
    (vis_home / "config.toml").write_text('model = "openai/gpt-5"\n', encoding="utf-8")
    result = vis("doctor", cwd=workspace, env_home=vis_home)
    assert result.returncode == 1
    assert "git" in result.stdout and "todo" in result.stdout
    assert "broken" in result.stdout and "failed" in result.stdout
    assert "model       openai/gpt-5" in result.stdout
    assert "OPENAI_API_KEY" in result.stdout  # the chosen model's missing key is reported
    assert f"extensions  {vis_home / 'extensions'}\n" in result.stdout  # where yours go


def test_doctor_is_clean_on_a_fresh_install(workspace, vis_home):
    result = vis("doctor", cwd=workspace, env_home=vis_home)
    assert result.returncode == 0, result.stdout
    assert "model       no model" in result.stdout
    assert f"extensions  {vis_home / 'extensions'} (none yet)" in result.stdout


def test_run_without_blocks_or_extension_calls_imports_no_ipc(workspace, vis_home, tmp_path):
    """``vis run`` loads msgspec and the value codec only with its first child process: a
    turn that runs no block and calls no extension starts faster without them. A JSON script
    is read without yaml (the bench's figure uses one). Nor does it load what only other work
    needs: ctypes (a keeper's ``prctl``; the host imports the keeper module for its process
    trees), the table of HTML entities (a server's error page) and the sandbox child's
    namespace with pickle (the host reads only the protocol's limits)."""
    from vis_core.extension_host import bundled_cache

    s = tmp_path / "script.json"
    s.write_text(json.dumps([{"text": "hi there"}, {"text": "hi there"}]), encoding="utf-8")
    run = ("run", "--provider", "scripted", "--script", str(s), "hi")
    declared = bundled_cache.cache_file({"VIS_HOME": str(vis_home)})
    if not declared.is_file():  # the first start of the test run registers the bundled ones
        assert vis(*run, cwd=workspace, env_home=vis_home).returncode == 0
    result = vis(*run, cwd=workspace, env_home=vis_home, extra_env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    imported = {line.rpartition("|")[2].strip() for line in result.stderr.splitlines()}
    assert "vis_core.printmode" in imported  # the import times were written
    assert not imported & {"msgspec", "vis_core.ipc.values", "vis_core.ipc.messages", "yaml"}
    assert not imported & {"ctypes", "html.entities", "vis_core.sandbox.state", "pickle"}
