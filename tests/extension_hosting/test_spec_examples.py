"""The Extension API's own examples, copied into extensions with its own import line, run
unchanged in a session."""

from __future__ import annotations

import json
from pathlib import Path

from vis_core.events import ActivityEnded
from vis_core.tools.names import BUILTIN_TOOL_NAMES
from vis_core.tools.registry import ToolRegistry

from .harness import (
    code_turn,
    install_extension,
    open_host,
    run_turn,
    write_script,
)

REPORTS = '''
import blockether.vis.extension as vis

include_details = vis.Setting(
    id="report_details",
    label="Report details",
    default=False,
    scopes=["global", "project", "group", "session"],
    description="Include the supporting detail in reports.",
)

def report() -> str:
    """Prepare a report with the selected level of detail."""
    return "Detailed report" if include_details.value() else "Summary"

vis.register_extension(vis.Extension(
    name="reports",
    alias="reports",
    description="Prepare reports.",
    settings=[include_details],
    symbols=[vis.Symbol(report, activity=vis.Activity(
        label="Prepare report", show_start=False,
    ))],
))
'''

RECORDS = '''
from dataclasses import dataclass

import blockether.vis.extension as vis


@dataclass(frozen=True)
class Status:
    env: str
    phases: tuple[int, ...] = ()

    @property
    def next_phase(self) -> int:
        return len(self.phases) + 1

    def __str__(self) -> str:
        return f"{self.env}: next phase {self.next_phase}"


@dataclass(frozen=True, slots=True)
class Page:
    title: str


@vis.sequence(field="results")
@dataclass(frozen=True, slots=True)
class PageList:
    results: tuple[Page, ...]
    total: int


def status() -> Status:
    """Report the environment and its next phase."""
    return Status("DEV04")


def pages() -> PageList:
    """List the pages of the wiki."""
    return PageList((Page("Home"), Page("Setup"), Page("FAQ")), total=10)


vis.register_extension(vis.Extension(
    name="records", alias="records", description="Typed records.",
    symbols=[
        vis.Symbol(status, activity=vis.Activity(label="Check status", show_start=False)),
        vis.Symbol(pages, activity=vis.Activity(label="List pages", show_start=False)),
    ],
))
'''

GREETER = '''
import blockether.vis.extension as vis


class Greeter:
    @vis.method(activity=vis.Activity(label="Generate greeting", show_start=False))
    def hello(self, name: str, /, *, loud: bool = False) -> str:
        """Return a greeting for ``name``; it never sends messages."""
        text = f"Hello, {name}!"
        return text.upper() if loud else text


vis.register_extension(vis.Extension(
    name="greeter",
    alias="greeter",
    description="Generate greeting text.",
    prompt=(
        "Use greet.hello to generate greeting text; it never sends messages.\\n"
        'Discover the tools with apropos(r"^greet\\\\.") '
        'and read doc("greet.hello") before calling.'
    ),
    symbols=[vis.Symbol(Greeter(), name="greet")],
))
'''

GITHUB = '''
import blockether.vis.extension as vis


def gh_runs(limit: int = 20) -> list[dict]:
    """The newest workflow runs of the repository."""
    return [{"id": n, "status": "completed"} for n in range(1, limit + 1)]


vis.register_extension(vis.Extension(
    name="github", alias="gh", description="GitHub workflow runs.",
    symbols=[vis.Symbol(gh_runs, activity=vis.Activity(label="List workflow runs"))],
))
'''

RUNS_USER = '''
import blockether.vis.extension as vis


def recent_runs() -> list[int]:
    """The ids of the five newest runs, through the session's gh_runs tool."""
    runs = vis.tools.gh_runs(limit=5)                   # the model calls gh_runs(limit=5)
    return [run["id"] for run in runs]


vis.register_extension(vis.Extension(
    name="ci", alias="ci", description="CI summaries.",
    symbols=[vis.Symbol(recent_runs, activity=vis.Activity(label="Summarize runs"))],
))
'''

VISUAL = '''
import blockether.vis.extension as vis


def check_visual_differences(handle: str, finding: str) -> str:
    """Report one finding for the named visual comparison."""
    vis.publish_activity(
        vis.ActivityPresentation(
            "Checking visual differences",
            finding,
            (vis.ActivityText(finding),),
            handle_id=handle,
        )
    )
    return finding


vis.register_extension(
    vis.Extension(
        name="visual-comparisons",
        description="Report visual comparison findings.",
        alias="visual",
        symbols=[
            vis.Symbol(
                check_visual_differences,
                activity=vis.Activity(label="Check visual differences", show_start=False),
            )
        ],
    )
)
'''

BLOCK = """
import json
r = await report()
s = await status()
pl = await pages()
hits = await apropos(r"^greet\\.")
text = await doc("greet.hello")
runs = await recent_runs()
first = await visual.check_visual_differences("comparison-7", "One difference")
second = await check_visual_differences("comparison-7", "No differences")
print(json.dumps({
    "report": r, "same_report": await reports.report(),
    "next_phase": s.next_phase, "status": str(s),
    "pages": [p.title for p in pl], "len": len(pl), "last": pl[-1].title, "total": pl.total,
    "hello": await greet.hello("Ada", loud=True),
    "hits": [h.name for h in hits], "doc_head": text.splitlines()[0],
    "contract": greet.hello.contract["name"],
    "runs": runs, "findings": [first, second],
}))
"""


async def test_an_extension_made_of_the_spec_examples_runs_unchanged(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    for name, source in {
        "reports": REPORTS,
        "records": RECORDS,
        "greeter": GREETER,
        "github": GITHUB,
        "ci": RUNS_USER,
        "visual": VISUAL,
    }.items():
        install_extension(vis_home, name, source)
    write_script(script_path, code_turn(BLOCK))
    host = await open_host(workspace, script_path)
    try:
        assert host.catalog.loaded.errors == (), host.catalog.loaded.errors
        outcome = await run_turn(host)
        prompt = await host.registry.sessions[0].system_prompt()
        own = {t.name for t in host.registry.sessions[0].invoker.registry() if t.owner == "vis"}
    finally:
        await host.close()
    assert own == BUILTIN_TOOL_NAMES  # the names no extension may take are the real ones
    out = outcome.printed(0)
    assert out["report"] == out["same_report"] == "Summary"
    assert out["next_phase"] == 1 and out["status"] == "DEV04: next phase 1"
    assert out["pages"] == ["Home", "Setup", "FAQ"] and out["len"] == 3
    assert out["last"] == "FAQ" and out["total"] == 10
    assert out["hello"] == "HELLO, ADA!"
    assert out["hits"] == ["greet.hello"] and "greet.hello" in out["doc_head"]
    assert out["contract"] == "greet.hello"
    assert out["runs"] == [1, 2, 3, 4, 5]
    assert out["findings"] == ["One difference", "No differences"]
    # the model is shown the bare names, never alias-prefixed ones
    assert "- `report`:" in prompt and "- `greet.hello`:" in prompt
    assert "- `gh_runs`:" in prompt and "reports.report" not in prompt
    ended = [e.activity for e in outcome.events if isinstance(e, ActivityEnded) and e.activity]
    tools = [a.tool for a in ended]
    assert tools.count("report") == 2 and "gh_runs" in tools and "greet.hello" in tools
    (runs,) = [a for a in ended if a.tool == "gh_runs"]
    (summarize,) = [a for a in ended if a.tool == "recent_runs"]
    assert runs.parent_id == summarize.id  # vis.tools' call shows under the caller's Activity
    checks = [a for a in ended if a.tool == "check_visual_differences"]
    assert [a.handle_id for a in checks] == ["comparison-7", "comparison-7"]


DUPLICATE = '''
import blockether.vis.extension as vis


def report() -> str:
    """Another report."""
    return "mine"


def guard(call):
    return None


vis.register_extension(vis.Extension(
    name="zz-other-reports", alias="other", description="Also reports.",
    symbols=[vis.Symbol(report, activity=vis.Activity(label="Report"))],
    op_hooks=[vis.OpHook(["patch", "fs_access"], guard)],
))
'''

SHADOW = '''
import blockether.vis.extension as vis


def grep(query: str) -> str:
    """A grep of my own."""
    return query


vis.register_extension(vis.Extension(
    name="shadow", alias="shadow", description="Shadows grep.",
    symbols=[vis.Symbol(grep, activity=vis.Activity(label="Search"))],
))
'''


def test_a_duplicate_bare_name_or_a_built_in_name_does_not_load(vis_home: Path) -> None:
    from vis_core.extension_host.loader import load_extensions

    install_extension(vis_home, "reports", REPORTS)
    install_extension(vis_home, "zz_other", DUPLICATE)
    install_extension(vis_home, "shadow", SHADOW)
    loaded = load_extensions(bundled=None)
    assert [e.name for e in loaded.enabled] == ["reports"]
    errors = {e.extension: e.message for e in loaded.errors}
    assert "'report' is already exported by extension 'reports'" in errors["zz-other-reports"]
    assert errors["zz-other-reports"].endswith("; its op hooks (fs_access, patch) are not active")
    assert "shadow the built-in 'grep'" in errors["shadow"]


def test_the_alias_path_is_a_second_name_of_the_same_tool(vis_home: Path) -> None:
    from vis_core.extension_host.loader import load_extensions

    install_extension(vis_home, "visual", VISUAL)
    install_extension(vis_home, "greeter", GREETER)
    loaded = load_extensions(bundled=None)
    registry = ToolRegistry(loaded.host_tools())
    bare = registry.get("check_visual_differences")
    assert bare is not None and registry.get("visual.check_visual_differences") is bare
    assert set(registry.names()) == {"check_visual_differences", "greet.hello"}
    assert registry.get("greeter.greet.hello") is registry.get("greet.hello")


def test_bundled_git_and_todo_keep_their_namespaces(vis_home: Path) -> None:
    from vis_core.extension_host.loader import load_extensions

    loaded = load_extensions()
    names = ToolRegistry(loaded.host_tools()).names()
    assert {"git.status", "git.diff", "git.log", "git.blame"} <= set(names)
    assert {"todo.add", "todo.list", "todo.done", "todo.remove"} <= set(names)
    assert json.dumps(names)  # plain strings


PLAIN = '''
import blockether.vis.extension as vis


def tally(items: list[str]) -> int:
    """Count the items."""
    return len(items)


class Counter:
    def total(self, n: int) -> int:
        """Add one."""
        return n + 1


vis.register_extension(vis.Extension(
    name="counting", alias="counting", description="Counts.",
    symbols=[vis.Symbol(tally), vis.Symbol(Counter(), name="counter")],
))
'''


async def test_a_tool_without_an_activity_is_shown_by_its_bare_name(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "counting", PLAIN)
    write_script(
        script_path,
        code_turn(
            "print(await tally(['a', 'b']), await counter.total(2), await counting.tally([]))"
        ),
    )
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    assert outcome.blocks[0].stdout.strip() == "2 3 0"
    ended = [e.activity for e in outcome.events if isinstance(e, ActivityEnded) and e.activity]
    shown = [(a.tool, a.presentation.headline if a.presentation else None) for a in ended]
    # the headline falls back to the bare name, also when called by the alias path
    assert shown == [("tally", "tally"), ("counter.total", "counter.total"), ("tally", "tally")]
