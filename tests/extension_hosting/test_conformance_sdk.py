"""Conformance of the Extension API (reference 000, issue 27): extensions written from the
spec's text, with its own import line, ``import blockether.vis.extension as vis``."""

from __future__ import annotations

import json
import sysconfig
import time
from pathlib import Path

import pytest

from .harness import code_turn, install_extension, open_host, run_turn, write_script

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

SAME_SDK = """
import json
import blockether.vis.extension as vis
import vis_core.extension as sdk
from blockether.vis.extension import Symbol
try:
    import blockether.vis.sessions
    other = "imported"
except ImportError as exc:
    other = str(exc)
print(json.dumps({
    "same": vis is sdk and Symbol is sdk.Symbol,
    "report": await report(),
    "declared": vis.Setting(id="x_y", label="X", default=True).id,
    "other": other,
}))
"""


def _shadow(workspace: Path) -> None:
    """A checkout's own ``blockether`` package, which must never be the SDK."""
    folder = workspace / "blockether" / "vis"
    folder.mkdir(parents=True)
    (workspace / "blockether" / "__init__.py").write_text("")
    (folder / "__init__.py").write_text("")
    (folder / "extension.py").write_text("SHADOWED = True\nraise SystemExit('shadowed')\n")


async def test_the_spec_import_line_is_the_sdk_in_entry_files_and_the_sandbox(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    _shadow(workspace)
    install_extension(vis_home, "reports", REPORTS)
    write_script(script_path, code_turn(SAME_SDK))
    host = await open_host(workspace, script_path)
    try:
        assert host.catalog.loaded.errors == (), host.catalog.loaded.errors
        outcome = await run_turn(host)
    finally:
        await host.close()
    out = outcome.printed(0)
    assert out["same"] is True and out["report"] == "Summary" and out["declared"] == "x_y"
    assert "blockether.vis.sessions" in out["other"]
    assert "import blockether.vis.extension as vis" in out["other"]


def test_the_package_carries_the_spec_import_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """What setup.py gives an editable install and a wheel alike."""
    from setuptools import distutils  # type: ignore[attr-defined]

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    # distutils sets PLAT in os.environ for good: set here, the worker's later tests lose it
    monkeypatch.setenv("PLAT", sysconfig.get_platform())
    dist = distutils.core.run_setup(str(root / "setup.py"), stop_after="init")
    assert {"blockether", "blockether.vis"} <= set(dist.packages)
    assert (root / "blockether" / "vis" / "extension.py").is_file()


DRAFT_HOOKS = """
import blockether.vis.extension as vis

def guard(call):
    return None

vis.register_extension(vis.Extension(
    name="release-guard",
    description="Watches drafts and commits.",
    op_hooks=[vis.OpHook(
        ["draft/create", "draft/sync", "draft/approve", "draft/discard", "git/commit"], guard,
    )],
))
"""


def test_draft_and_commit_hooks_load(vis_home: Path) -> None:
    from vis_core.extension_host.loader import load_extensions

    install_extension(vis_home, "release_guard", DRAFT_HOOKS)
    loaded = load_extensions(bundled=None)
    assert loaded.errors == () and [e.name for e in loaded.enabled] == ["release-guard"]


def test_fs_access_takes_no_phase_and_media_references_an_attachment() -> None:
    import blockether.vis.extension as vis

    with pytest.raises(ValueError, match="fs_access.*no phase"):
        vis.OpHook(["fs_access"], lambda call: None, phase="after")
    assert vis.OpHook(["fs_access"], lambda call: None).ops == ("fs_access",)
    for media in (vis.ActivityImage, vis.ActivityVideo, vis.ActivityAudio, vis.ActivityFile):
        for value in ("https://example.com/chart.png", "data:image/png;base64,iVBORw0K"):
            with pytest.raises(ValueError, match="vis.attach"):
                media(value)
        assert media("chart.png").attachment == "chart.png"


def test_speech_is_a_named_not_implemented_error() -> None:
    import blockether.vis.extension as vis

    with pytest.raises(vis.SpeechUnavailable, match="vis.speech") as raised:
        vis.speech.say("hello")
    assert isinstance(raised.value, NotImplementedError)
    with pytest.raises(vis.SpeechUnavailable):
        vis.speech.transcribe(b"")


SANDBOX_HOST_CALLS = """
import json
import blockether.vis.extension as vis
refused = {}
for name, call in {
    "log": lambda: vis.log("info", "from the sandbox"),
    "notify": lambda: vis.notify("from the sandbox"),
    "attach": lambda: vis.attach(b"data", "notes.txt"),
    "workspace_root": lambda: vis.workspace_root(),
    "project_root": lambda: vis.project_root(),
    "state": lambda: vis.state.get("x"),
    "register_extension": lambda: vis.register_extension(vis.Extension(name="x", description="X.")),
    "shell": lambda: vis.shell({"command": "true"}),
}.items():
    try:
        call()
        refused[name] = None
    except RuntimeError as exc:
        refused[name] = str(exc)
print(json.dumps({"refused": refused, "project_root_path": str(project_root_path)}))
"""


async def test_host_calls_in_the_sandbox_raise_and_project_root_path_is_there(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    write_script(script_path, code_turn(SANDBOX_HOST_CALLS))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    out = outcome.printed(0)
    for name, error in out["refused"].items():
        assert error is not None and "python_execution" in error, (name, error)
    assert Path(out["project_root_path"]) == workspace


PAGES = '''
import blockether.vis.extension as vis

def wiki_page(title: str) -> dict:
    """One wiki page with its metadata."""
    return {"title": title, "meta": {"total": 3, "tags": [{"name": "docs"}]}}

vis.register_extension(vis.Extension(
    name="wiki", alias="wiki", description="Wiki pages.",
    symbols=[vis.Symbol(wiki_page, activity=vis.Activity(label="Read page"))],
))
'''

PAGE_BLOCK = """
import json
page = await wiki_page("Home")
print(json.dumps({
    "total": page.meta.total, "tag": page.meta.tags[0].name, "item": page["meta"]["total"],
    "is_dict": isinstance(page, dict), "list": type(page.meta.tags).__name__,
}))
"""


async def test_a_json_object_result_allows_attribute_access_in_the_sandbox(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "wiki", PAGES)
    write_script(script_path, code_turn(PAGE_BLOCK))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    assert outcome.printed(0) == {
        "total": 3,
        "tag": "docs",
        "item": 3,
        "is_dict": True,
        "list": "list",
    }


BACKGROUND = '''
import os
import subprocess
import sys
import threading

import blockether.vis.extension as vis

include_details = vis.Setting(
    id="report_details",
    label="Report details",
    default=False,
    scopes=["global", "project", "group", "session"],
    description="Include the supporting detail in reports.",
)


def background_check() -> dict:
    """Check the report setting from a thread this extension starts."""
    seen = {}

    def work() -> None:
        vis.log("info", "background check ran")
        print("printed in a thread")
        seen["details"] = include_details.value()
        vis.state["checked"] = True

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return {**seen, "state": vis.state.get("checked")}


def noisy_build() -> int:
    """Run child processes whose output the extension does not read."""
    subprocess.run([sys.executable, "-c", "print('child said hello')"], check=True)
    status = os.system("echo system said hello >&2")
    return status


vis.register_extension(vis.Extension(
    name="background",
    alias="background",
    description="Background work.",
    settings=[include_details],
    symbols=[
        vis.Symbol(background_check, activity=vis.Activity(label="Check in background")),
        vis.Symbol(noisy_build, activity=vis.Activity(label="Build")),
    ],
))
'''


def _log_lines(vis_home: Path) -> list[str]:
    day = time.strftime("%Y-%m-%d")
    path = vis_home / "logs" / day / "vis.log"
    return path.read_text().splitlines() if path.exists() else []


async def test_a_thread_of_the_extension_logs_under_its_name_and_reads_the_setting(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "background", BACKGROUND)
    write_script(script_path, code_turn("import json\nprint(json.dumps(await background_check()))"))
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        await host.settings.set("report_details", True, "session", session_id=session.id)
        outcome = await run_turn(host, session_id=session.id)
    finally:
        await host.close()
    assert outcome.printed(0) == {"details": True, "state": True}
    for said in ("background check ran", "printed in a thread"):
        lines = [line for line in _log_lines(vis_home) if said in line]
        assert lines and all("[background]" in line for line in lines), (said, lines)


async def test_unread_child_output_reaches_the_extension_log(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "background", BACKGROUND)
    write_script(script_path, code_turn("print(await noisy_build())"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    assert outcome.blocks[0].error is None and outcome.blocks[0].stdout.strip() == "0"
    lines = _log_lines(vis_home)
    for said in ("child said hello", "system said hello"):
        ours = [line for line in lines if said in line]
        assert ours and all("[background]" in line for line in ours), (said, lines[-10:])


def test_the_import_name_in_a_plain_script_outside_vis(tmp_path: Path) -> None:
    import subprocess
    import sys

    _shadow(tmp_path)
    code = (
        "import json, blockether.vis.extension as vis, vis_core.extension as sdk\n"
        "try:\n"
        "    import blockether.vis.tools\n"
        "except ModuleNotFoundError as exc:\n"
        "    other = str(exc)\n"
        "print(json.dumps([vis is sdk, str(vis.workspace_root()), other]))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    same, root, other = json.loads(done.stdout)
    assert same is True and root == str(tmp_path)
    assert "'blockether.vis.tools'" in other and "only module under `blockether.vis`" in other


RUNNER = '''
import blockether.vis.extension as vis


def run_echo() -> dict:
    """Run echo through the session's shell tool and wait for it, synchronously."""
    sh = vis.tools.shell("echo hi-from-shell")
    status = sh.wait(30)
    return {"exit_code": status.exit_code, "output": status.output, "logs": sh.logs()}


vis.register_extension(vis.Extension(
    name="runner", alias="runner", description="Runs commands through the session.",
    symbols=[vis.Symbol(run_echo, activity=vis.Activity(label="Run echo"))],
))
'''


async def test_a_built_in_handle_from_vis_tools_works_in_synchronous_code(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "runner", RUNNER)
    write_script(script_path, code_turn("import json\nprint(json.dumps(await run_echo()))"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    assert outcome.printed(0) == {
        "exit_code": 0,
        "output": "hi-from-shell\n",
        "logs": "hi-from-shell\n",
    }


ELSEWHERE = '''
import blockether.vis.extension as vis


def start_elsewhere(root: str, script: str) -> dict:
    """Run one turn in a new session of another workspace root."""
    session = vis.sessions.create(root=root, script=script)
    turn = session.run("Report please.", timeout=120)
    return {"id": session.id, "status": turn["status"], "content": turn["content"]}


vis.register_extension(vis.Extension(
    name="elsewhere", alias="elsewhere", description="Sessions in other roots.",
    symbols=[vis.Symbol(start_elsewhere, activity=vis.Activity(label="Start elsewhere"))],
))
'''


async def test_sessions_create_with_another_root_runs_there_with_its_settings(
    vis_home: Path, workspace: Path, script_path: Path, tmp_path: Path
) -> None:
    from vis_core.paths import TrustStore, VisPaths

    other = tmp_path / "other-project"
    other.mkdir()
    (other / "vis.yml").write_text("toggles:\n  report_details: true\n")
    TrustStore(VisPaths.from_env()).trust(other)  # its values count: the person trusts it
    there = write_script(
        tmp_path / "there.yaml", [{"code": "print(await report())"}, {"text": "Reported."}]
    )
    install_extension(vis_home, "reports", REPORTS)
    install_extension(vis_home, "elsewhere", ELSEWHERE)
    block = (
        "import json\n"
        f"r = await start_elsewhere({str(other)!r}, {str(there)!r})\n"
        "print(json.dumps({**dict(r), 'here': await report()}))"
    )
    write_script(script_path, code_turn(block))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        out = outcome.printed(0)
        row = host.store.get_session(out["id"])
        stdout = [
            json.loads(e.data).get("stdout", "")
            for e in host.store.events(out["id"])
            if json.loads(e.data).get("type") == "BlockFinished"
        ]
    finally:
        await host.close()
    assert out["status"] == "completed" and out["content"] == "Reported."
    assert out["here"] == "Summary"  # this root has no such value
    assert row is not None and Path(row.workspace) == other.resolve()
    assert any("Detailed report" in text for text in stdout), stdout
