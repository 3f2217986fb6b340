"""Smaller Extension API deviations: calls at load time, declarations Vis cannot honour."""

from __future__ import annotations

from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.events import ActivityEnded
from vis_core.extension.declarations import Op
from vis_core.extension_host.loader import load_extensions
from vis_core.model.activity import ActivityState

from .harness import code_turn, install_extension, open_host, run_turn, write_script

EAGER = """
import vis_core.extension as vis

try:
    vis.sessions.create()
    CODE = "created"
except vis.GatewayError as exc:
    CODE = (exc.status, exc.code.value, "loading" in str(exc))

# what the call raised, in the declaration the registration worker reports
vis.register_extension(vis.Extension(name="eager", description=f"Started too early: {CODE!r}"))
"""


def test_a_change_call_while_loading_raises_session_not_bound(vis_home: Path) -> None:
    install_extension(vis_home, "eager", EAGER)
    loaded = load_extensions(bundled=None)
    ext = loaded.get("eager")
    assert ext is not None and ext.declaration is not None
    assert ext.declaration.description == "Started too early: (403, 'session-not-bound', True)"


def test_an_op_hook_for_an_unknown_op_is_a_declaration_error() -> None:
    known = (
        "patch",
        "shell",
        "python_execution",
        "fs_access",
        "mcp",
        "draft/create",
        "draft/sync",
        "draft/approve",
        "draft/discard",
        "git/commit",
    )  # every op Vis runs hooks for
    assert {op.value for op in Op} == set(known)
    for op in known:
        for phase in ("before", "after") if op != "fs_access" else ("before",):
            assert vis.OpHook(op, lambda call: None, phase=phase).ops == (op,)
    assert vis.OpHook(list(known), lambda call: None).ops == known
    # a typo or a wrong case: such a hook would never run
    for unknown in ("pach", "draft/created", "git/push", "Patch"):
        with pytest.raises(ValueError) as refused:
            vis.OpHook(["patch", unknown], lambda call: None)
        text = str(refused.value)
        assert f"OpHook op {unknown!r} is not an operation Vis knows" in text
        assert all(repr(op) in text for op in known), text


LAZY = '''
from dataclasses import dataclass

import vis_core.extension as vis


@vis.sequence(field="results")
@dataclass(frozen=True)
class Lazy:
    results: object


def lazy() -> Lazy:
    """Pages, produced lazily (which cannot cross to the sandbox)."""
    return Lazy(page for page in ("a", "b"))


vis.register_extension(vis.Extension(
    name="lazy", alias="lazy", description="Lazy pages.",
    symbols=[vis.Symbol(lazy, activity=vis.Activity(label="List pages"))],
))
'''


async def test_an_activity_whose_result_cannot_be_returned_is_failed(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "lazy", LAZY)
    write_script(script_path, code_turn("await lazy()"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    (activity,) = [e.activity for e in outcome.events if isinstance(e, ActivityEnded)]
    assert activity.state is ActivityState.FAILED
    assert "cannot be returned" in (activity.error or "")
    assert "cannot be returned" in (outcome.blocks[0].error or "")


HELPER = '''
def summarize_rows(rows, limit=10):
    """Summarize rows by column.

    Longer explanation: the first ``limit`` rows, joined."""
    return ", ".join(map(str, rows[:limit]))
'''


async def test_doc_reads_a_session_helper_and_defs(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    write_script(
        script_path,
        code_turn(
            HELPER,
            "import json\nprint(json.dumps([await doc('summarize_rows'), await doc('defs'), "
            "(await doc('cat')).splitlines()[0]]))",
        ),
    )
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    helper, defs, cat = outcome.printed(1)
    assert helper.startswith("summarize_rows(rows, limit=<int>)")
    assert "Summarize rows by column." in helper and "Longer explanation" in helper
    assert defs.startswith("defs(") and "List, search and read session helpers" in defs
    # whole in itself: it pointed at a "session-helpers guide" that doc() could not read
    assert "guide" not in defs
    assert "restored helper" in defs and "not saved" in defs and "`del name` removes it" in defs
    assert "cat" in cat  # tools still come from the host's doc


LOGS = '''
import vis_core.extension as vis


def build_log() -> str:
    """The build log's end (at most 2,000 lines / 50 KB; the full log is saved)."""
    text = "".join(f"step {i}\\n" for i in range(3000))
    return vis.fit_output(text, keep="tail", label="build-log")


vis.register_extension(vis.Extension(
    name="builds", alias="builds", description="Build logs.",
    symbols=[vis.Symbol(build_log, activity=vis.Activity(label="Read build log"))],
))
'''


async def test_extensions_bound_output_with_the_exported_helpers(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "builds", LOGS)
    write_script(script_path, code_turn("text = await build_log()\nprint(text[:300])"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    note = outcome.blocks[0].stdout.split("\n\n")[0]
    assert note.startswith("[Output truncated: showing the last 2,000 of 3,000 lines")
    saved = Path(note.split("Full output saved to: ")[1].rstrip("]"))
    assert saved.name.startswith("build-log-") and saved.read_text().count("\n") == 3000
    assert saved.is_relative_to(vis_home)


def test_truncation_helpers_follow_the_built_in_limits() -> None:
    from vis_core.agent.prompt import PYTHON_EXECUTION_DESCRIPTION
    from vis_core.sandbox.output import MAX_BYTES as SHOWN_BYTES
    from vis_core.sandbox.output import MAX_LINES as SHOWN_LINES
    from vis_core.text_limits import MAX_BYTES, MAX_LINES

    assert vis.DEFAULT_MAX_BYTES == MAX_BYTES == SHOWN_BYTES == 50 * 1024
    assert vis.DEFAULT_MAX_LINES == MAX_LINES == SHOWN_LINES == 2000
    head = vis.truncate_head("".join(f"{i}\n" for i in range(2500)))
    assert head.truncated and head.shown_lines == 2000 and head.text.startswith("0\n")
    tail = vis.truncate_tail("x" * 10 + "\n" + "y" * 60_000 + "\n")
    assert tail.truncated and tail.shown_bytes <= MAX_BYTES
    assert vis.truncate_line("abcdef", 4) == "a…" and vis.format_size(2048) == "2.0 KB"
    assert "2,000 lines or 50 KB" in PYTHON_EXECUTION_DESCRIPTION


SHELLER = '''
import gc

import vis_core.extension as vis


def fire_and_forget() -> int:
    """Run two commands: read one's output, never the other's."""
    read = vis.shell("echo read-by-me")
    read.wait(30)
    read.logs()
    ignored = vis.shell("echo nobody-read-this; echo on-stderr >&2")
    code = ignored.wait(30).exit_code
    del read, ignored
    gc.collect()
    return code


vis.register_extension(vis.Extension(
    name="sheller", alias="sheller", description="Starts commands.",
    symbols=[vis.Symbol(fire_and_forget, activity=vis.Activity(label="Run"))],
))
'''


async def test_shell_output_an_extension_never_reads_goes_to_its_log(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "sheller", SHELLER)
    write_script(script_path, code_turn("print(await fire_and_forget())"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    assert outcome.blocks[0].stdout.strip() == "0"
    logs = "".join(p.read_text() for p in (vis_home / "logs").rglob("*.log"))
    assert "[sheller] output of `echo nobody-read-this; echo on-stderr >&2` (exit 0)" in logs
    assert "    nobody-read-this" in logs and "    on-stderr" in logs
    assert "read-by-me" not in logs


SENDER = '''
import vis_core.extension as vis


def nudge() -> str:
    """Send a request into the session that called this tool."""
    try:
        vis.session.send("and one more thing")
    except RuntimeError as exc:
        return str(exc)
    return "sent"


vis.register_extension(vis.Extension(
    name="sender", alias="sender", description="Sends requests.",
    symbols=[vis.Symbol(nudge, activity=vis.Activity(label="Nudge"))],
))
'''


async def test_send_into_the_busy_bound_session_is_refused_at_once(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "sender", SENDER)
    write_script(script_path, code_turn("print(await nudge())"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        turns = list(host.store.turns(outcome.ended.session_id))
    finally:
        await host.close()
    text = outcome.blocks[0].stdout
    assert "Session.send()" in text and "is busy with a turn" in text
    assert [t.request for t in turns] == ["go"]  # nothing was queued behind it
