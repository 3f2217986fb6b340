"""Op hooks through a real scripted session: patch block/repair, python_execution, fs_access."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.model.turn import TurnStatus

GUARD = """
import vis_core.extension as vis

def _remember(key, value):
    vis.state[key] = vis.state.get(key, []) + [value]

def before_patch(call):
    preview = call.get("preview")
    _remember("seen", {"args": call["args"], "preview": preview})
    path = preview["path"]
    if path.endswith("locked.txt"):
        return vis.block("locked.txt is generated", hint="edit locked.src instead")
    if path.endswith("nohint.txt"):
        return vis.block("no edits to nohint.txt")
    if path.endswith("tabs.py"):
        return vis.repair(preview["after"].replace("\\t", "    "), notes=["tabs became spaces"])
    if path.endswith("bad_repair.py"):
        return vis.repair(preview["after"], notes=[])
    if path.endswith("crash.txt"):
        raise RuntimeError("this guard has a bug")
    return None

def later_guard(call):
    _remember("later", call["preview"]["after"])

def after_any(call):
    _remember("after", {"op": call["op"], "result": call["result"]})

def no_secrets(call):
    if call["path"].endswith("secret.txt"):
        raise PermissionError("secret.txt is private")
    _remember("access", [call["operation"], call["path"]])

vis.register_extension(vis.Extension(
    name="guard",
    description="Guards patches and watches blocks.",
    op_hooks=[
        vis.OpHook(["patch"], before_patch),
        vis.OpHook("patch", later_guard),
        vis.OpHook(["patch", "python_execution", "shell"], after_any, phase="after"),
        vis.OpHook("fs_access", no_secrets),
    ],
))
"""

PY_GUARD = """
import vis_core.extension as vis

def before(call):
    if call["op"] == "shell":
        if "rm -rf" in call["args"][0]["command"]:
            return vis.block("no recursive deletes")
        if "fix-me" in call["args"][0]["command"]:
            return vis.repair("echo repaired", notes=["not for shell"])
        return None
    code = call["args"][0]["code"]
    if "forbidden" in code:
        return vis.block("forbidden blocks are not allowed", hint="drop the forbidden call")
    if "repair-me" in code:
        return vis.repair(code, notes=["not for python"])

def after(call):
    vis.state["calls"] = vis.state.get("calls", []) + [call["result"]]

vis.register_extension(vis.Extension(
    name="pyguard",
    description="Guards python_execution and shell.",
    op_hooks=[
        vis.OpHook(["python_execution", "shell"], before),
        vis.OpHook("python_execution", after, phase="after"),
    ],
))
"""


async def test_patch_blocked_with_and_without_hint(extension, scripted, workspace: Path):
    extension("guard", GUARD)
    run = await scripted(
        [
            {"code": 'await patch("locked.txt", 0, "x\\n")'},
            {"code": 'await patch("nohint.txt", 0, "y\\n")'},
            {"text": "done"},
        ]
    )
    session = await run.session()
    ended = await session.submit("write two files")
    assert ended.status is TurnStatus.COMPLETED
    first, second = run.blocks()
    assert "patch was blocked by extension 'guard': locked.txt is generated" in first.error
    assert "Hint: edit locked.src instead" in first.error
    assert "no edits to nohint.txt" in second.error
    assert "Ask the user how to proceed before you retry" in second.error
    assert not (workspace / "locked.txt").exists() and not (workspace / "nohint.txt").exists()
    state = run.state("guard")
    # refused patches reach after hooks with result=None
    assert [a["result"] for a in state["after"] if a["op"] == "patch"] == [None, None]
    seen = state["seen"][0]
    assert seen["args"] == [{"path": "locked.txt", "version": 0, "edits": "x\n"}]
    assert seen["preview"] == {
        "path": str(workspace / "locked.txt"),
        "before": "",
        "after": "x\n",
        "spans": [[1, 1]],
    }


async def test_patch_repaired_file_holds_repaired_source(extension, scripted, workspace: Path):
    extension("guard", GUARD)
    (workspace / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    run = await scripted(
        [
            {"code": 'r = await patch("tabs.py", 0, "def f():\\n\\treturn 1\\n")\nprint(r)'},
            {"code": 'print(await cat("app.py"))'},
            {
                "code": 'print(await patch("app.py", 1, '
                '[{"start": 2, "end": 2, "text": "b = 20\\n"}]))'
            },
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("write f")
    repaired, read, edited = run.blocks()
    assert repaired.error is None, repaired.error
    assert (workspace / "tabs.py").read_text() == "def f():\n    return 1\n"
    assert "corrected by op hooks: tabs became spaces" in repaired.stdout
    assert "+    return 1" in repaired.stdout  # the diff shows what was written
    state = run.state("guard")
    # the later guard saw the repaired preview
    assert state["later"][0] == "def f():\n    return 1\n"
    after = [a["result"] for a in state["after"] if a["op"] == "patch"]
    assert after[0]["notes"] == ["tabs became spaces"] and after[0]["created"] is True
    # an edit: the preview holds the whole file before and after, spans in the result
    assert "@1" in read.stdout, read.stdout
    assert edited.error is None, edited.error
    preview = state["seen"][-1]["preview"]
    assert preview["before"] == "a = 1\nb = 2\nc = 3\n"
    assert preview["after"] == "a = 1\nb = 20\nc = 3\n"
    assert preview["spans"] == [[2, 2]]
    assert (workspace / "app.py").read_text() == "a = 1\nb = 20\nc = 3\n"


async def test_invalid_repair_fails_and_hook_errors_do_not_block(extension, scripted, workspace):
    extension("guard", GUARD)
    run = await scripted(
        [
            {"code": 'await patch("bad_repair.py", 0, "x = 1\\n")'},
            {"code": 'print(await patch("crash.txt", 0, "ok\\n"))'},
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("go")
    bad, crash = run.blocks()
    assert "its repair is invalid" in bad.error and "nonempty list" in bad.error
    assert not (workspace / "bad_repair.py").exists()
    assert crash.error is None  # the guard raised: logged, the patch went on
    assert (workspace / "crash.txt").read_text() == "ok\n"
    log_text = "".join(p.read_text() for p in (run.host.paths.log_dir).rglob("*.log"))
    assert "[guard] before hook for patch failed" in log_text


async def test_python_execution_hooks_see_raised_and_refused_blocks(
    extension, scripted, workspace: Path
):
    extension("pyguard", PY_GUARD)
    run = await scripted(
        [
            {"code": "x = 1\nprint('started')\nraise ValueError('boom')"},
            {"code": "open('made.txt', 'w').write('no')  # forbidden"},
            {"code": "print('repair-me')"},
            {"code": "h = await shell('rm -rf build')"},
            {"code": "h = await shell('echo fix-me')"},
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("go")
    raised, refused, repaired, shell, shell_repaired = run.blocks()
    assert "ValueError: boom" in raised.error
    assert refused.error.startswith("OperationBlocked: python_execution was blocked")
    assert "Hint: drop the forbidden call" in refused.error
    assert not (workspace / "made.txt").exists()
    assert "only patch accepts repairs (Vis repairs python_execution blocks itself)" in (
        repaired.error
    )
    # a shell command is no block Vis repairs: it was said to be ("Vis repairs shell itself")
    assert "its before hook returned vis.repair, but only patch accepts repairs" in (
        shell_repaired.error
    )
    assert "Vis repairs" not in shell_repaired.error, shell_repaired.error
    assert "shell was blocked by extension 'pyguard': no recursive deletes" in shell.error
    calls = run.state("pyguard")["calls"]
    assert calls[0]["stdout"] == "started\n" and "ValueError: boom" in calls[0]["error"]
    assert [(f["source"], f["status"]) for f in calls[0]["forms"]] == [
        ("x = 1", "ok"),
        ("print('started')", "ok"),
        ("raise ValueError('boom')", "error"),
    ]
    assert calls[1] is None and calls[2] is None  # refused blocks: result=None
    assert calls[3]["error"] and "shell was blocked" in calls[3]["error"]


async def test_shell_after_hook_sees_the_ended_command(extension, scripted, workspace: Path):
    extension("guard", GUARD)
    run = await scripted(
        [
            {"code": "h = await shell('echo hi; exit 3')\nprint((await h.wait(30)).exit_code)"},
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("run it")
    assert run.blocks()[0].stdout == "3\n"
    for _ in range(500):  # the after hook runs in the background once the process ended
        shells = [a for a in run.state("guard").get("after", []) if a["op"] == "shell"]
        if shells:
            break
        await asyncio.sleep(0.02)
    [seen] = shells
    result = seen["result"]
    assert result["command"] == "echo hi; exit 3" and result["exit_code"] == 3
    assert result["id"].startswith("sh-") and isinstance(result["pid"], int)
    assert "hi" in result["output"] and not result["stopped"] and not result["timed_out"]


async def test_fs_access_refuses_file_tools(extension, scripted, workspace: Path):
    extension("guard", GUARD)
    (workspace / "secret.txt").write_text("hunter2\n")
    (workspace / "open.txt").write_text("hello\n")
    run = await scripted(
        [
            {"code": 'print(await cat("secret.txt"))'},
            {"code": 'print(await cat("open.txt"))'},
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("read")
    secret, public = run.blocks()
    assert "PermissionError" in secret.error and "secret.txt is private" in secret.error
    assert "hunter2" not in secret.stdout
    assert "hello" in public.stdout
    assert ["file-read", str(workspace / "open.txt")] in run.state("guard")["access"]


def test_markers_validate_and_strings_of_collects():
    assert vis.block(" no ", hint="ask") == vis.block("no", "ask")
    with pytest.raises(ValueError, match="nonblank reason"):
        vis.block("  ")
    with pytest.raises(ValueError, match="nonempty list"):
        vis.repair("x", notes=())
    with pytest.raises(ValueError, match="nonblank strings"):
        vis.repair("x", notes=["ok", " "])
    with pytest.raises(ValueError, match="source as str"):
        vis.repair(b"x", notes=["n"])  # type: ignore[arg-type]
    assert vis.repair("x", notes=("n",)).notes == ("n",)
    value = {"path": "a.py", "edits": [{"start": 1, "text": "b"}, ("c", Path("/d"))], "n": 3}
    assert vis.strings_of(value) == ["a.py", "b", "c", "/d"]


SEARCHER = """
import vis_core.extension as vis

def find(query: str) -> str:
    '''Search the workspace through the session's grep.'''
    return str(vis.tools.grep(query))

vis.register_extension(vis.Extension(
    name="searcher", alias="searcher", description="Searches.",
    symbols=[vis.Symbol(find, activity=vis.Activity(label="Find"))],
))
"""


async def test_fs_access_covers_every_file_a_folder_grep_reads(
    extension, scripted, workspace: Path
):
    extension("guard", GUARD)
    extension("searcher", SEARCHER)
    (workspace / "secret.txt").write_text("token hunter2\n")
    (workspace / "open.txt").write_text("token hello\n")
    run = await scripted(
        [
            {"code": 'print(await grep("token"))'},
            {"code": 'print(await find("token"))'},
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("search")
    blocks = run.blocks()
    assert len(blocks) == 2, run.events
    for block in blocks:  # the model's grep, then vis.tools.grep from an extension
        assert block.error is None, block.error
        assert "hello" in block.stdout and "hunter2" not in block.stdout
        assert "1 matching line in 1 file" in block.stdout


NOTED = """
import vis_core.extension as vis

def before_patch(call):
    vis.state["calls"] = vis.state.get("calls", []) + [sorted(call)]

vis.register_extension(vis.Extension(
    name="noted", description="Notes every patch.",
    op_hooks=[vis.OpHook("patch", before_patch)],
))
"""


async def test_a_before_hook_sees_a_refused_patch_without_preview(
    extension, scripted, workspace: Path
):
    extension("noted", NOTED)
    (workspace / "a.txt").write_text("one\n")
    run = await scripted(
        [
            {"code": 'await patch("a.txt", 7, [{"start": 1, "end": 1, "text": "two"}])'},
            {"code": 'await cat("a.txt")'},
            {"code": 'await patch("a.txt", 1, [{"start": 1, "end": 1, "text": "2"}])'},
            {"text": "done"},
        ]
    )
    session = await run.session()
    await session.submit("edit")
    refused, _, _ = run.blocks()
    assert "unknown version @7" in refused.error
    calls = run.state("noted")["calls"]
    assert calls[0] == ["args", "op"]  # called, with no preview: the patch is refused
    assert calls[1] == ["args", "op", "preview"]
