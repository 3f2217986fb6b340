"""An extension written from the spec's text hooks the draft lifecycle and git/commit: it
loads, sees the spec's arguments, refuses with vis.block, and its roots follow the draft."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import yaml

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions

from .conftest import git, make_repo

DRAFT_HOOKS = '''
import json

import vis_core.extension as vis

OPS = ["draft/create", "draft/sync", "draft/approve", "draft/discard", "git/commit"]


def where() -> str:
    """The roots and files this session gives the extension."""
    root = vis.workspace_root()
    child = vis.shell("pwd")  # a relative cwd: the project root
    child.wait(30)
    return json.dumps({
        "workspace_root": str(root),
        "project_root": str(vis.project_root()),
        "shell_cwd": child.logs().strip(),
        "files": sorted(str(p.relative_to(root)) for p in vis.workspace_files() or []),
    })


def guard(call):
    args = call["args"][0]
    if call["op"] == "git/commit" and any(f.endswith(".key") for f in args["files"]):
        return vis.block("commits never carry .key files")
    if call["op"] == "draft/create" and args["label"] == "reserved":
        return vis.block("that label is reserved")
    return None


def observe(call):
    args = call["args"][0]
    seen = vis.state.get("seen", [])
    seen.append({"op": call["op"], **{k: args.get(k) for k in (
        "workspace_id", "label", "root", "repo_root", "backend", "branch", "target_branch",
        "files", "message")}})
    vis.state["seen"] = seen


vis.register_extension(vis.Extension(
    name="drafthooks", description="Guards drafts and commits.", alias="dh",
    symbols=[vis.Symbol(where)],
    op_hooks=[vis.OpHook(OPS, guard), vis.OpHook(OPS, observe, phase="after")],
))
'''


def install_extension(vis_home: Path, name: str, source: str) -> None:
    (vis_home / "extensions").mkdir(exist_ok=True)
    (vis_home / "extensions" / f"{name}.py").write_text(textwrap.dedent(source))


def write_script(path: Path, blocks: list[str]) -> Path:
    path.write_text(yaml.safe_dump([{"code": code} for code in blocks] + [{"text": "Done."}]))
    return path


async def open_host(workspace: Path, script: Path) -> Host:
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


async def test_an_extension_hooks_the_draft_lifecycle_and_its_commits(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = false\ndraft_model_approves = true\n")
    repo = make_repo(workspace)
    install_extension(vis_home, "drafthooks", DRAFT_HOOKS)
    script = write_script(
        tmp_path / "script.yaml",
        [
            'try:\n    await draft_create("reserved")\nexcept Exception as e:\n    print(e)',
            'await draft_create("work")',
            "print(await dh.where())",
            'open("id.key", "w").write("k")\n'
            'try:\n    await draft_approve("add key")\nexcept Exception as e:\n    print(e)',
            'import os\nos.remove("id.key")\nopen("ok.txt", "w").write("ok")\n'
            'print((await draft_approve("add ok"))["files"])',
        ],
    )
    host = await open_host(repo, script)
    try:
        loaded = host.catalog.loaded.get("drafthooks")
        assert loaded is not None and loaded.declaration is not None  # it loaded
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(lambda e: blocks.append(e) if isinstance(e, BlockFinished) else None)
        await session.submit("go")
        seen = host.store.state_get("drafthooks", "seen")
        listed = host.drafts.listed()
    finally:
        await host.close()
    assert [b.error for b in blocks] == [None] * 5, [b.error for b in blocks]
    assert "that label is reserved" in blocks[0].stdout
    assert listed == []  # the refused one was never made, the approved one is gone
    where = json.loads(blocks[2].stdout.splitlines()[-1])
    draft_root = where["workspace_root"]
    assert Path(draft_root) != repo and "drafts" in Path(draft_root).parts
    assert where["project_root"] == draft_root and where["shell_cwd"] == draft_root
    assert where["files"] == [".gitignore", "a.txt", "b.txt"]
    assert "commits never carry .key files" in blocks[3].stdout
    assert not (repo / "id.key").exists()
    assert blocks[4].stdout.splitlines()[-1] == "['ok.txt']"
    assert (repo / "ok.txt").read_text() == "ok" and git(repo, "status", "--porcelain") == ""

    ops = [entry["op"] for entry in seen]
    assert ops == ["draft/create", "git/commit", "draft/approve"]
    create, commit, approve = seen
    assert create["label"] == "work" and create["backend"] == "worktree"
    assert create["root"] == draft_root and create["repo_root"] == str(repo)
    assert create["workspace_id"] == approve["workspace_id"]
    assert commit["branch"] == "main" and commit["files"] == ["ok.txt"]  # the commit is main's
    assert commit["message"] == "add ok"
    assert approve["branch"] == "vis/draft/work" and approve["target_branch"] == "main"
    assert approve["files"] == ["ok.txt"] and approve["message"] == "add ok"
