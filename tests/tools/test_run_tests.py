"""run_tests: a real pytest run in the workspace, counts, failures with files, the Activity."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from vis_core.model.activity import ActivityTable
from vis_core.paths import TrustStore, VisPaths
from vis_core.tools.testing import TestReport


def make_venv(root: Path, name: str = ".venv") -> Path:
    """A project environment whose python is this test run's interpreter (it has pytest),
    without the plugins installed beside it (xdist, asyncio, Textual's snapshots): a
    project's own environment has none of them, and loading them is most of a small run."""
    python = root / name / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(
        f'#!/bin/sh\nexport PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\nexec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    return python


@pytest.fixture(autouse=True)
def project_venv(workspace: Path) -> Path:
    return make_venv(workspace)


def make_project(root: Path) -> None:
    (root / "pytest.ini").write_text("[pytest]\n")
    tests = root / "tests"
    tests.mkdir()
    (tests / "test_math.py").write_text(
        "import pytest\n\n"
        "def test_ok():\n    assert 1 + 1 == 2\n\n"
        "def test_bad():\n    assert 1 + 1 == 3, 'arithmetic broke'\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_skip():\n    pass\n"
    )
    (tests / "test_more.py").write_text("def test_one():\n    pass\n\ndef test_two():\n    pass\n")


async def test_counts_failures_and_activity(tools: dict, workspace: Path) -> None:
    make_project(workspace)
    run = tools["run_tests"]
    report = await run.fn()
    assert isinstance(report, TestReport)
    assert (report.runner, report.passed, report.failed, report.skipped) == ("pytest", 3, 1, 0 + 1)
    assert report.verdict == "failed" and report.exit_code == 1
    [failure] = report.failures
    assert failure.test == "tests/test_math.py::test_bad"
    # the failing line (pytest's ``tests/test_math.py:7: AssertionError``), not the def's
    assert (failure.path, failure.line) == ("tests/test_math.py", 7)
    assert "arithmetic broke" in failure.message
    assert "FAILED tests/test_math.py::test_bad (tests/test_math.py:7)" in str(report)

    shown = run.activity.render(phase="success", args=(), kwargs={}, result=report, error=None)
    assert shown.headline == "Run tests" and shown.verdict == "failed"
    assert shown.summary == "all tests · 3 passed, 1 failed, 1 skipped"  # verdict: the badge
    table = next(block for block in shown.content if isinstance(block, ActivityTable))
    assert table.rows[0][0] == "tests/test_math.py::test_bad"
    assert table.paths == (str(workspace / "tests/test_math.py"),)
    assert run.tag == "verification" and run.activity.show_start


async def test_target_and_keyword_narrow_the_run(tools: dict, workspace: Path) -> None:
    make_project(workspace)
    report = await tools["run_tests"].fn("tests/test_more.py", keyword="one")
    assert (report.passed, report.failed, report.verdict) == (1, 0, "passed")
    assert report.command.endswith("-m pytest -q -k one tests/test_more.py")
    shown = tools["run_tests"].activity.render(
        phase="success",
        args=("tests/test_more.py",),
        kwargs={"keyword": "one"},
        result=report,
        error=None,
    )
    # the row names the keyword and the tests it left out; opened, it shows the command
    assert shown.verdict == "passed" and shown.summary == (
        "tests/test_more.py matching -k 'one' · 1 passed, 0 failed, 0 skipped, 1 deselected"
    )
    [terminal] = shown.content
    assert terminal.command_as_run() == report.command and terminal.exit == 0


async def test_a_keyword_run_says_its_keyword_and_what_it_left_out(
    tools: dict, workspace: Path
) -> None:
    """``run_tests(keyword="add")`` was headlined "all tests" while pytest deselected 4 of 6,
    and a passing row had nothing to open. The keyword, the deselected tests and (opened) the
    command show now; a keyword nothing matches says no tests ran and how many it left out."""
    make_project(workspace)
    run = tools["run_tests"]

    def shown(report: TestReport, **kwargs: object):
        return run.activity.render(
            phase="success", args=(), kwargs=kwargs, result=report, error=None
        )

    report = await run.fn(keyword="one or two")
    assert (report.passed, report.deselected) == (2, 3)
    assert shown(report, keyword="one or two").summary == (
        "all tests matching -k 'one or two' · 2 passed, 0 failed, 0 skipped, 3 deselected"
    )
    none = await run.fn(keyword="nothing_matches_this")
    assert (none.verdict, none.deselected, none.errors) == (None, 5, 0)
    assert shown(none, keyword="nothing_matches_this").summary == (
        "all tests matching -k 'nothing_matches_this' · no tests ran (5 deselected)"
    )
    assert str(none).startswith("pytest: no tests ran (exit 5); 5 deselected by -k")
    one_error = TestReport("pytest", "pytest", 0, 0, 0, 1, 1, (), "")
    assert one_error.counts == "0 passed, 0 failed, 0 skipped, 1 error"


async def test_no_tests_and_no_setup(tools: dict, workspace: Path) -> None:
    with pytest.raises(FileNotFoundError, match="found no test setup"):
        await tools["run_tests"].fn()
    # a timeout of NaN or -1 stopped the run at once, and one of 0 set no limit
    for wrong in (float("nan"), -1, 0):
        with pytest.raises(ValueError, match="run_tests: timeout must be a positive number"):
            await tools["run_tests"].fn(timeout=wrong)
    (workspace / "pytest.ini").write_text("[pytest]\n")
    report = await tools["run_tests"].fn()
    assert report.verdict is None and report.exit_code == 5
    assert str(report).startswith("pytest: no tests ran (exit 5)")


async def test_the_projects_environment_runs_the_tests(
    tools: dict, workspace: Path, project_venv: Path
) -> None:
    make_project(workspace)
    report = await tools["run_tests"].fn("tests/test_more.py")
    assert report.command.startswith(f"{project_venv} -m pytest")
    assert report.passed == 2 and report.verdict == "passed"


def _path_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **scripts: str) -> None:
    folder = tmp_path / "path-bin"
    folder.mkdir()
    for name, body in scripts.items():
        script = folder / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


async def test_without_a_project_python_run_tests_says_so(
    tools: dict, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(workspace)
    shutil.rmtree(workspace / ".venv")
    _path_with(tmp_path, monkeypatch)
    with pytest.raises(FileNotFoundError, match="found no Python for this project"):
        await tools["run_tests"].fn()
    # a python3 on PATH without pytest is named, not reported as "failed, 0 passed"
    shutil.rmtree(tmp_path / "path-bin")
    _path_with(tmp_path, monkeypatch, python3="echo 'python3: No module named pytest' >&2; exit 1")
    with pytest.raises(RuntimeError, match="pytest is not installed for .*python3 on PATH"):
        await tools["run_tests"].fn()


async def test_python_environment_shared_uses_vis_own_interpreter(
    tools: dict, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(workspace)
    shutil.rmtree(workspace / ".venv")
    (workspace / "vis.yml").write_text("python:\n  environment: shared\n")
    _path_with(tmp_path, monkeypatch)
    # a value a project file sets waits for trust: before it, Vis's interpreter is not used
    with pytest.raises(FileNotFoundError, match="counts once you trust the project"):
        await tools["run_tests"].fn("tests/test_more.py")
    TrustStore(VisPaths.from_env()).trust(workspace)
    report = await tools["run_tests"].fn("tests/test_more.py")
    assert report.command.startswith(f"{sys.executable} -m pytest") and report.passed == 2


def hostile_python(root: Path, plant: str) -> None:
    """The checkout's own ``.venv/bin/python``: it stands in for pytest, reports one failure,
    and leaves ``plant`` (a shell command on ``$REPORT``) where the JUnit report goes."""
    python = root / ".venv" / "bin" / "python"
    python.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --junitxml=*) REPORT="${a#--junitxml=}";; esac; done\n'
        f"{plant}\n"
        "echo '1 failed, 1 passed in 0.01s'\n"
        "exit 1\n"
    )


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
async def test_a_jailed_test_run_cannot_make_vis_read_a_host_file_as_the_report(
    workspace: Path, tmp_path: Path
) -> None:
    """The JUnit report lies in the session's output folder, which the jailed test run may
    write: it leaves a link to a file only the host sees in the report's place. Vis reads the
    report without following links, so that file's text never reaches the model."""
    from vis_core.tools import ToolContext, builtin_tools

    secret = tmp_path / "host-only.xml"
    secret.write_text(
        '<testsuite><testcase name="t" file="f.py">'
        '<failure message="HOST-SECRET-7f3a"/></testcase></testsuite>'
    )
    make_project(workspace)
    hostile_python(workspace, f'ln -s {secret} "$REPORT"')
    ctx = ToolContext(workspace, "session-1", tmp_path / "outputs", jail=True)
    try:
        run = next(t for t in builtin_tools(ctx) if t.name == "run_tests")
        report = await run.fn()
    finally:
        await ctx.close()
    assert "HOST-SECRET-7f3a" not in str(report)
    assert (report.exit_code, report.failed, report.passed) == (1, 1, 1)  # pytest's summary


async def test_a_fifo_left_as_the_report_does_not_hang_vis(
    tools: dict, workspace: Path, tmp_path: Path
) -> None:
    """The test run leaves a named pipe nobody writes as its report: Vis's reading it blocked
    the whole app for good. A report that is not a regular file is not read."""
    import os
    import stat
    import threading

    make_project(workspace)
    hostile_python(workspace, 'mkfifo "$REPORT"')
    done = threading.Event()

    def guard() -> None:  # only so that a failing run ends instead of hanging the suite
        if done.wait(120):
            return
        for path in (tmp_path / "outputs").glob("junit-*"):
            if stat.S_ISFIFO(path.lstat().st_mode):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=guard, daemon=True).start()
    try:
        report = await tools["run_tests"].fn()
    finally:
        done.set()
    assert (report.exit_code, report.failed, report.passed) == (1, 1, 1)


@pytest.mark.parametrize("name", ["package.json", "vis.yml"])
def test_a_project_file_linked_to_a_device_is_not_read_without_end(
    workspace: Path, name: str
) -> None:
    """A checkout whose ``package.json`` (or ``vis.yml``) links to ``/dev/zero``: finding the
    test runner read it on the host without end until Vis ran out of memory. Only a regular
    file of a sensible size is read. (In a process with 1 GiB of address space, so the
    failing read ends in a MemoryError there.)"""
    import subprocess
    import textwrap

    (workspace / ".venv").rename(workspace / "no-venv")  # no pytest markers, no venv
    os.symlink("/dev/zero", workspace / name)
    program = textwrap.dedent(
        f"""
        import resource
        from pathlib import Path
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from vis_core.tools.testing import detect_runner, python_runner
        try:
            print(detect_runner(Path({str(workspace)!r})))
        except FileNotFoundError as exc:
            print("no runner")
        print(python_runner(Path({str(workspace)!r}))[1])
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.splitlines()[0] == "no runner"


async def test_a_runner_that_cannot_start_is_named_not_counted(
    tools: dict, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pytest on PATH is a leftover shim whose interpreter is gone: the shell cannot start
    it (exit 127). run_tests said 'failed — 0 passed, 0 failed, 0 skipped'; it now says it
    could not start that program, where Vis found it, and what to do."""
    make_project(workspace)
    shutil.rmtree(workspace / ".venv")
    folder = tmp_path / "path-bin"
    folder.mkdir()
    shim = folder / "pytest"
    shim.write_text("#!/nonexistent/python3\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    with pytest.raises(RuntimeError) as raised:
        await tools["run_tests"].fn()
    said = str(raised.value)
    assert said.startswith(f"run_tests: could not start {shim} (pytest on PATH): ")
    assert "(exit 127)" in said and "python3 -m venv .venv" in said
    assert "jail" not in said  # the jail is off here


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
async def test_a_runner_the_jail_hides_is_named_with_the_setting_that_shows_it(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest on the host's PATH lies in a folder the jail does not show (as ~/.pyenv/shims
    does): the jailed run cannot find it; Vis says so and names jail_read_paths."""
    from vis_core.tools import ToolContext, builtin_tools

    make_project(workspace)
    shutil.rmtree(workspace / ".venv")
    folder = tmp_path / "shims"
    folder.mkdir()
    (folder / "pytest").write_text(f'#!/bin/sh\nexec {sys.executable} -m pytest "$@"\n')
    (folder / "pytest").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    ctx = ToolContext(workspace, "session-1", tmp_path / "outputs", jail=True)
    try:
        run = next(t for t in builtin_tools(ctx) if t.name == "run_tests")
        with pytest.raises(RuntimeError) as raised:
            await run.fn()
    finally:
        await ctx.close()
    said = str(raised.value)
    assert said.startswith(f"run_tests: could not start {folder}/pytest (pytest on PATH): ")
    assert f"The jail hides {folder} from the tests" in said and "jail_read_paths" in said
