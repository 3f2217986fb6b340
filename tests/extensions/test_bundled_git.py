"""The bundled git extension against a real repository: status, diff, log, blame, Activities."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import vis_core.extension as vis
from vis_core.events import BlockFinished
from vis_core.extension.context import CallContext, calling
from vis_core.extension_host.discovery import bundled_dir
from vis_core.extension_host.loaded import LoadedExtensions
from vis_core.extension_host.loader import load_extensions
from vis_core.host import Host
from vis_core.host_options import HostOptions
from vis_core.tools.registry import HostTool

RunHere = Callable[[LoadedExtensions], LoadedExtensions]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(workspace: Path) -> Path:
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "config", "user.name", "Ada Lovelace")
    _git(workspace, "config", "user.email", "ada@example.com")
    (workspace / "notes.txt").write_text("one\ntwo\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-q", "-m", "First commit")
    (workspace / "notes.txt").write_text("one\nTWO\nthree\n")
    _git(workspace, "commit", "-q", "-am", "Second commit")
    return workspace


@pytest.fixture
def tools(repo: Path, run_here: RunHere) -> Iterator[dict[str, HostTool]]:
    loaded = run_here(load_extensions(bundled=bundled_dir(), include_packages=False))
    ext = loaded.get("git")
    assert ext is not None, loaded.errors
    with calling(CallContext(session_id="s1", workspace_root=repo, project_root=repo)):
        yield {tool.name: tool for tool in ext.tools}


def _present(tool: HostTool, result: Any = None, error: Any = None) -> vis.ActivityPresentation:
    assert tool.activity is not None and tool.activity.render is not None
    phase = "failure" if error is not None else "success"
    return tool.activity.render(phase=phase, args=(), kwargs={}, result=result, error=error)


def test_tools_are_named_under_the_alias(tools: dict[str, HostTool]) -> None:
    assert list(tools) == ["git.status", "git.diff", "git.log", "git.blame"]
    assert all(t.tag == "observation" and t.owner == "git" for t in tools.values())
    assert all(t.activity is not None and not t.activity.show_start for t in tools.values())


def test_clean_status(tools: dict[str, HostTool]) -> None:
    result = tools["git.status"].fn()
    assert (result.branch, result.clean, result.files) == ("main", True, ())
    assert str(result) == "main: clean"
    assert _present(tools["git.status"], result).summary == "main: no changes"


def test_status_lists_changes_with_pressable_paths(repo: Path, tools: dict[str, HostTool]) -> None:
    (repo / "src" / "app.py").write_text("print('bye')\n")
    (repo / "new.md").write_text("# new\n")
    _git(repo, "mv", "notes.txt", "renamed.txt")
    result = tools["git.status"].fn()
    changes = {(f.path, f.status, f.staged, f.unstaged, f.original_path) for f in result.files}
    assert changes == {
        ("renamed.txt", "renamed", True, False, "notes.txt"),
        ("src/app.py", "modified", False, True, None),
        ("new.md", "untracked", False, True, None),
    }
    presentation = _present(tools["git.status"], result)
    assert presentation.headline == "Check git status"
    assert presentation.summary == "main: 3 changed files"
    (table,) = presentation.content
    assert isinstance(table, vis.ActivityTable)
    assert table.paths == tuple(str(repo / row[0]) for row in table.rows)


def test_diff_of_the_working_tree_and_the_index(repo: Path, tools: dict[str, HostTool]) -> None:
    (repo / "notes.txt").write_text("one\nTWO\nthree\nfour\n")
    result = tools["git.diff"].fn()
    assert [(f.path, f.added, f.removed) for f in result.files] == [("notes.txt", 1, 0)]
    assert "+four" in result.files[0].patch and str(result).startswith("diff --git")
    presentation = _present(tools["git.diff"], result)
    # git diff compares the working tree with the index; --cached, the index with HEAD
    assert presentation.summary == "1 file, working tree against index: +1 -0"
    table, block = presentation.content
    assert table.paths == (str(repo / "notes.txt"),)
    assert isinstance(block, vis.ActivityDiff) and block.path == str(repo / "notes.txt")
    assert block.diff == result.files[0].patch
    staged = tools["git.diff"].fn(staged=True)
    assert staged.files == () and staged.target == "index against HEAD"
    assert _present(tools["git.diff"], staged).summary == "No changes: index against HEAD"
    against = tools["git.diff"].fn("notes.txt", ref="HEAD~1")
    assert [(f.added, f.removed) for f in against.files] == [(3, 1)]
    assert against.target == "working tree against HEAD~1"


def test_log_newest_first_with_limit(tools: dict[str, HostTool]) -> None:
    result = tools["git.log"].fn()
    assert [c.subject for c in result.commits] == ["Second commit", "First commit"]
    assert result.commits[0].author == "Ada Lovelace" and not result.partial
    assert len(result.commits[0].sha) == 40
    one = tools["git.log"].fn(limit=1)
    assert len(one.commits) == 1 and one.partial
    assert _present(tools["git.log"], one).summary == "newest 1 commit on HEAD"
    only_app = tools["git.log"].fn("src/app.py")
    assert [c.subject for c in only_app.commits] == ["First commit"]
    (table,) = _present(tools["git.log"], result).content
    assert table.headers == ("Commit", "Date", "Author", "Subject")
    with pytest.raises(ValueError, match="limit must be a positive whole number"):
        tools["git.log"].fn(limit=0)


def test_blame_lines(repo: Path, tools: dict[str, HostTool]) -> None:
    result = tools["git.blame"].fn("notes.txt")
    assert [(b.line, b.text, b.summary) for b in result.lines] == [
        (1, "one", "First commit"),
        (2, "TWO", "Second commit"),
        (3, "three", "Second commit"),
    ]
    assert result.commits == 2 and result.path == "notes.txt"
    assert result.lines[0].author == "Ada Lovelace"
    part = tools["git.blame"].fn("notes.txt", start=2, end=2)
    assert [b.line for b in part.lines] == [2]
    presentation = _present(tools["git.blame"], result)
    assert presentation.summary == f"{repo / 'notes.txt'}: 3 lines from 2 commits"
    assert presentation.content[0].paths == (str(repo / "notes.txt"),) * 3


def test_failures_name_what_git_said(tmp_path: Path, tools: dict[str, HostTool]) -> None:
    with pytest.raises(RuntimeError, match="no such path|no such file") as info:
        tools["git.blame"].fn("missing.txt")
    failed = _present(tools["git.blame"], error=info.value)
    assert failed.headline == "Blame file" and failed.summary
    outside = tmp_path / "plain"
    outside.mkdir()
    with calling(CallContext(session_id="s1", workspace_root=outside, project_root=outside)):
        with pytest.raises(RuntimeError, match="is not inside a git working tree"):
            tools["git.status"].fn()


def test_empty_repository_has_no_commits(tmp_path: Path, tools: dict[str, HostTool]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    _git(empty, "init", "-q")
    with calling(CallContext(session_id="s1", workspace_root=empty, project_root=empty)):
        result = tools["git.log"].fn()
    assert result.commits == ()
    assert _present(tools["git.log"], result).summary == "No commits on HEAD"


async def test_a_session_runs_git_status_in_its_worker_through_vis_git(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    _git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    (repo / "notes.txt").write_text("changed\n")
    script = tmp_path / "script.yaml"
    code = "s = await git.status()\nprint(s.branch, [f.path for f in s.files])"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "ok"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=repo, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Any] = []
        session.subscribe(events.append)
        await session.submit("status")
        (block,) = [e for e in events if isinstance(e, BlockFinished)]
        assert block.error is None, block.error
        assert block.stdout.strip() == "main ['notes.txt']"
        worker = host.registry.extension_workers[session.id].worker_for("git")
        assert worker.pid is not None  # the git extension's tool ran in the session's worker
    finally:
        await host.close()
    assert not marker.exists()  # the repository's fsmonitor program never ran


async def test_a_huge_git_diff_keeps_a_bounded_activity(repo: Path, tmp_path: Path) -> None:
    """A block that rewrites tracked files by megabytes, then reads ``git.diff()``: the
    Activity stored and drawn keeps 256 KB of its diffs and says how much of each it cut
    (each Activity stored the diffs whole: a diff of 100 MB took 100 MB of vis.db)."""
    from vis_core.events import ActivityEnded
    from vis_core.extension_host.activity_bounds import MAX_ACTIVITY_BYTES

    code = (
        "for name in ('notes.txt', 'src/app.py'):\n"
        "    open(name, 'w').write(''.join(f'row {n} ' + 'y' * 60 + '\\n' for n in range(20000)))\n"
        "d = await git.diff()\n"
        "print(d.added)"
    )
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "ok"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=repo, provider="scripted", script=script))
    events: list[Any] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("diff")
    finally:
        await host.close()
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.stdout.strip() == "40000"  # the model's result is the tool's, whole
    (ended,) = [e.activity for e in events if isinstance(e, ActivityEnded)]
    table, first, first_cut, second_cut = ended.presentation.content
    assert isinstance(table, vis.ActivityTable) and isinstance(first, vis.ActivityDiff)
    assert len(first.diff.encode()) <= MAX_ACTIVITY_BYTES and first.diff.endswith("\n")
    assert (
        first_cut.text
        == "[Cut: this Activity keeps 3,713 of these 20,008 lines (255.9 KB of 1.4 MB).]"
    )
    assert second_cut.text == "[Cut: this Activity keeps 0 of these 20,006 lines (0 B of 1.4 MB).]"


@pytest.mark.parametrize("tool", ["git.diff", "git.log"])
def test_a_ref_is_never_read_as_an_option(
    repo: Path, tmp_path: Path, tools: dict[str, HostTool], tool: str
) -> None:
    """``ref="--output=FILE"`` would make git write a file (also in plan mode, also outside
    the workspace with the jail off): a ref that starts with ``-`` is refused."""
    target = tmp_path / "written.txt"
    with pytest.raises(ValueError, match="is not a ref"):
        tools[tool].fn(ref=f"--output={target}")
    assert not target.exists()
