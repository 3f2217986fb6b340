"""run_tests: a real pytest run in the workspace, counts, failures with files, the Activity."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.model.activity import ActivityTable
from vis_core.tools import TestReport


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
    assert (failure.path, failure.line) == ("tests/test_math.py", 6)
    assert "arithmetic broke" in failure.message
    assert "FAILED tests/test_math.py::test_bad (tests/test_math.py:6)" in str(report)

    shown = run.activity.render(phase="success", args=(), kwargs={}, result=report, error=None)
    assert shown.headline == "Run tests" and shown.verdict == "failed"
    assert shown.summary == "all tests · failed · 3 passed, 1 failed, 1 skipped"
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
    assert shown.verdict == "passed" and shown.summary.startswith("tests/test_more.py · passed")
    assert shown.content == ()


async def test_no_tests_and_no_setup(tools: dict, workspace: Path) -> None:
    with pytest.raises(FileNotFoundError, match="found no test setup"):
        await tools["run_tests"].fn()
    (workspace / "pytest.ini").write_text("[pytest]\n")
    report = await tools["run_tests"].fn()
    assert report.verdict is None and report.exit_code == 5
    assert str(report).startswith("pytest: no tests ran (exit 5)")
