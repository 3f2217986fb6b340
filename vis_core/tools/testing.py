"""``run_tests``: find the test runner (pytest first), run it, report counts and failures."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vis_core.model.activity import Verdict
from vis_core.paths import find_project_root, private_dir, project_trusted
from vis_core.small_files import small_bytes, small_text
from vis_core.system.jail_paths import hidden_path_entries
from vis_core.system.shell import time_limit
from vis_core.tools.context import ToolContext

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

PYTEST_MARKERS = ("pytest.ini", "conftest.py", "tox.ini", "setup.cfg", "pyproject.toml")
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


@dataclass(frozen=True)
class TestFailure:
    """One failing or erroring test and the file it names."""

    __test__ = False  # not a pytest test class

    test: str
    path: str
    line: int | None
    message: str


@dataclass(frozen=True)
class TestReport:
    """One test run: counts, failures with their files, exit code and the output's tail."""

    __test__ = False  # not a pytest test class

    runner: str
    command: str
    passed: int
    failed: int
    skipped: int
    errors: int
    exit_code: int | None
    failures: tuple[TestFailure, ...]
    output: str
    timed_out: bool = False
    deselected: int = 0

    @property
    def verdict(self) -> Verdict | None:
        if self.exit_code == 0 and not (self.failed or self.errors):
            return Verdict.PASSED
        if self.runner == "pytest" and self.exit_code == 5:
            return None  # nothing collected: neither a pass nor a failure
        return Verdict.FAILED

    @property
    def counts(self) -> str:
        parts = [f"{self.passed} passed", f"{self.failed} failed", f"{self.skipped} skipped"]
        if self.errors:
            parts.append(f"{self.errors} error{'' if self.errors == 1 else 's'}")
        if self.deselected:
            parts.append(f"{self.deselected} deselected")
        return ", ".join(parts)

    def __str__(self) -> str:
        if self.timed_out:
            head = f"{self.runner}: timed out and was stopped ({self.counts} before that)"
        elif self.verdict is None:
            head = f"{self.runner}: no tests ran (exit {self.exit_code})"
            if self.deselected:
                head += f"; {self.deselected} deselected by -k"
        else:
            head = f"{self.runner}: {self.verdict} — {self.counts}"
        rows = [head]
        for failure in self.failures:
            where = f"{failure.path}:{failure.line}" if failure.line else failure.path
            rows.append(f"FAILED {failure.test} ({where}): {failure.message}")
        if self.verdict != "passed" and self.output:
            rows.append("--- output (tail) ---")
            rows.append(self.output.rstrip("\n"))
        return "\n".join(rows)


VENVS = (".venv", "venv")
MAX_PROJECT_FILE_BYTES = 1 << 20


def _python_setting(workspace: Path) -> str | None:
    """``python.environment`` of the project's ``vis.yml`` (``project`` or ``shared``), once
    the person trusts the project (a value a project file sets waits for trust)."""
    root = find_project_root(workspace)
    if not project_trusted(root):
        return None
    project_file = root / "vis.yml"
    text = small_text(project_file, MAX_PROJECT_FILE_BYTES)
    if text is None:
        return None
    import yaml  # only with a vis.yml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    python = data.get("python") if isinstance(data, dict) else None
    value = python.get("environment") if isinstance(python, dict) else None
    if value is None and isinstance(data, dict):
        value = data.get("python.environment")
    return value if isinstance(value, str) else None


def python_runner(workspace: Path, live: Path | None = None) -> tuple[list[str], str]:
    """The project's pytest command and where it was found: the workspace's ``.venv`` or
    ``venv`` (in a draft, then the live workspace's: git leaves an ignored environment out
    of the draft), then ``python.environment: shared`` of ``vis.yml`` (Vis's own
    interpreter), then ``pytest`` or ``python3`` on PATH. Never Vis's interpreter unless the
    project asks for it."""
    places = [(workspace, "")]
    if live is not None:
        places.append((live, " (of the workspace the draft came from)"))
    for folder, whose in places:
        for name in VENVS:
            python = folder / name / "bin" / "python"
            if python.exists():
                return [str(python), "-m", "pytest"], f"the project's {name}/{whose}"
    if _python_setting(workspace) == "shared":
        return [sys.executable, "-m", "pytest"], "Vis's shared environment (python.environment)"
    pytest = shutil.which("pytest")
    if pytest:
        return [pytest], "pytest on PATH"
    python3 = shutil.which("python3")
    if python3:
        return [python3, "-m", "pytest"], "python3 on PATH"
    raise FileNotFoundError(
        f"run_tests: found no Python for this project: no .venv/ or venv/ in {workspace}, "
        "python.environment in vis.yml is not 'shared' (a project's vis.yml counts once you "
        "trust the project), and neither pytest nor python3 is on PATH. Create the project's "
        "environment (python3 -m venv .venv, then install pytest in it) or run the tests with "
        "shell()."
    )


def detect_runner(workspace: Path, live: Path | None = None) -> tuple[str, list[str]]:
    """The runner name and its base command for ``workspace`` (``live``: see
    :func:`python_runner`); pytest is tried first."""
    if any((workspace / name).exists() for name in PYTEST_MARKERS) or (
        (workspace / "tests").is_dir() or any(workspace.glob("test_*.py"))
    ):
        return "pytest", [*python_runner(workspace, live)[0], "-q"]
    package = workspace / "package.json"
    if package.exists():
        try:
            scripts = json.loads(small_text(package, MAX_PROJECT_FILE_BYTES) or "{}").get(
                "scripts", {}
            )
        except (ValueError, AttributeError):
            scripts = {}
        if "test" in scripts:
            return "npm", ["npm", "test", "--silent"]
    if (workspace / "Cargo.toml").exists() and shutil.which("cargo"):
        return "cargo", ["cargo", "test"]
    if (workspace / "go.mod").exists() and shutil.which("go"):
        return "go", ["go", "test", "./..."]
    raise FileNotFoundError(
        f"run_tests: found no test setup in {workspace} (looked for pytest files, tests/, "
        "package.json with a test script, Cargo.toml and go.mod). Run your test command with "
        "shell() instead."
    )


def _live_environment(program: str, live: Path | None) -> tuple[Path, ...]:
    """The live workspace's environment folder a draft's test run uses (the jail shows it,
    read-only), or nothing."""
    if live is None:
        return ()
    for name in VENVS:
        if Path(program) == live / name / "bin" / "python":
            return (live / name,)
    return ()


def _failing_line(node: ET.Element, file: str) -> int | None:
    """The line of ``file`` where the test failed, from pytest's traceback
    (``tests/test_x.py:7: AssertionError``): its last frame in the test's file."""
    found = re.findall(rf"^{re.escape(file)}:(\d+): ", node.text or "", re.MULTILINE)
    return int(found[-1]) if found else None


def _failure_text(node: ET.Element) -> str:
    message = node.get("message") or (node.text or "").strip()
    first = message.strip().splitlines()[0] if message.strip() else node.tag
    return first[:300]


MAX_REPORT_BYTES = 32 * 1024 * 1024


def parse_junit(
    xml_path: Path, root: Path, ctx: ToolContext
) -> tuple[dict[str, int], list[TestFailure]]:
    """Counts and failures from a pytest JUnit file (xunit1: cases carry ``file`` and ``line``)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    import xml.etree.ElementTree as ET  # only when a test run wrote its report

    failures: list[TestFailure] = []
    # the run (jailed or not) may write the output folder: its last name is not followed (a
    # link to a file only the host can read), and a pipe or device is not read (see small_bytes)
    data = small_bytes(xml_path, MAX_REPORT_BYTES, follow=False)
    if data is None:
        raise ValueError(f"the test report {xml_path.name} is not a regular file")
    for case in ET.fromstring(data).iter("testcase"):
        outcome = "passed"
        problem = None
        for child in case:
            if child.tag == "failure":
                outcome, problem = "failed", child
            elif child.tag == "error":
                outcome, problem = "errors", child
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        counts[outcome] += 1
        if problem is None:
            continue
        file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        path = ctx.display((root / file).resolve()) if file else ""
        line = case.get("line")
        # where it failed; else the line of its ``def`` (junit's line counts from 0)
        failed_at = _failing_line(problem, file) if file else None
        name = case.get("name", "?")
        failures.append(
            TestFailure(
                test=f"{file}::{name}" if file else name,
                path=path,
                line=failed_at or (int(line) + 1 if line and line.isdigit() else None),
                message=_failure_text(problem),
            )
        )
    return counts, failures


def _summary_counts(text: str) -> dict[str, int]:
    """The counts of pytest's last summary line (``2 passed, 4 deselected in 0.1s``)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0, "deselected": 0}
    lines = [line for line in text.splitlines() if " in " in line and SUMMARY.search(line)]
    for number, word in SUMMARY.findall(lines[-1] if lines else ""):
        key = "errors" if word.startswith("error") else word
        if key in counts:
            counts[key] += int(number)
    return counts


# the shell's exit codes for a program it could not run: not found (127), not runnable (126)
NOT_STARTED = (126, 127)


def _not_started(ctx: ToolContext, runner: str, program: str, code: int, output: str) -> str:
    """What to say when the shell could not start the runner's program: the shell's own line,
    where Vis found the program and, when the jail hides its folder, what to do about it."""
    said = next((line for line in output.splitlines() if f"{program}:" in line), "")
    reason = said.split(f"{program}: ", 1)[-1].strip() or f"exit {code}"
    where = ""
    if runner == "pytest":
        where = f" ({python_runner(ctx.workspace, ctx.live_workspace)[1]})"
    text = f"run_tests: could not start {program}{where}: {reason} (exit {code})."
    folder = {"PATH": str(Path(program).parent)}
    if ctx.jail and hidden_path_entries(folder, ctx.workspace, ctx.shells.read_paths):
        text += (
            f" The jail hides {Path(program).parent} from the tests (it shows the workspace and"
            " the system's folders); the jail_read_paths setting shows a folder read-only."
        )
    if runner == "pytest":
        text += (
            " Create the project's environment in the workspace (python3 -m venv .venv, then"
            " install pytest in it) or run the tests with shell()."
        )
    else:
        text += " Run the tests with shell() instead."
    return text


async def run_test_suite(
    ctx: ToolContext,
    target: str | list[str] | None = None,
    *,
    keyword: str | None = None,
    timeout: float = 600,
) -> TestReport:
    """Run the project's tests and report them; a run longer than ``timeout`` is stopped."""
    limit = time_limit(timeout, "run_tests: timeout")
    runner, argv = detect_runner(ctx.workspace, ctx.live_workspace)
    targets = [] if target is None else [target] if isinstance(target, str) else list(target)
    for item in targets:
        ctx.resolve(item.split("::", 1)[0], tool="run_tests")
    shown = [*argv, *(item.lstrip("@") for item in targets)]
    if keyword:
        shown[len(argv) : len(argv)] = ["-k", keyword]
    xml_path: Path | None = None
    if runner == "pytest":
        private_dir(ctx.output_dir)
        xml_path = ctx.output_dir / f"junit-{uuid.uuid4().hex[:12]}.xml"
        argv += [f"--junitxml={xml_path}", "-o", "junit_family=xunit1"]
        if keyword:
            argv += ["-k", keyword]
    elif keyword:
        raise ValueError(f"run_tests: keyword= works with pytest only; this project uses {runner}")
    argv += [item.lstrip("@") for item in targets]
    command = shlex.join(argv)
    handle = await ctx.shells.start(
        command,
        cwd=ctx.workspace,
        output_dir=ctx.output_dir,
        timeout=limit,
        jail_workspace=ctx.workspace if ctx.jail else None,
        jail_read_write=(ctx.output_dir,) if ctx.jail else (),
        env={"PY_COLORS": "0", "NO_COLOR": "1"},
        jail_read_only=_live_environment(argv[0], ctx.live_workspace) if ctx.jail else (),
    )
    status = await handle.wait(None)
    output = status.output
    if runner == "pytest" and status.exit_code and "No module named pytest" in handle.combined():
        where = python_runner(ctx.workspace, ctx.live_workspace)[1]
        raise RuntimeError(
            f"run_tests: pytest is not installed for {argv[0]} ({where}); install it there "
            f"({argv[0]} -m pip install pytest) or run the tests with shell()"
        )
    if status.exit_code in NOT_STARTED and f"{argv[0]}:" in handle.combined():
        raise RuntimeError(_not_started(ctx, runner, argv[0], status.exit_code, handle.combined()))
    failures: list[TestFailure] = []
    counts = None
    if xml_path is not None and os.path.lexists(xml_path):
        try:
            counts, failures = parse_junit(xml_path, ctx.workspace, ctx)
        except (ValueError, SyntaxError):  # not a report Vis can read: pytest's own summary
            failures = []
        xml_path.unlink(missing_ok=True)
    summary = _summary_counts(handle.combined())
    if counts is None:
        counts = summary
    return TestReport(
        runner=runner,
        command=shlex.join(shown),
        passed=counts["passed"],
        failed=counts["failed"],
        skipped=counts["skipped"],
        errors=counts["errors"],
        exit_code=status.exit_code,
        failures=tuple(failures),
        output=output,
        timed_out=status.timed_out,
        deselected=summary["deselected"],  # a report lists only the tests that ran
    )
