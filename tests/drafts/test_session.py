"""A session in a draft: its blocks, tools, shells and roots act on the draft, not the live
workspace; a resumed session is back in it; approval and discard leave it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vis_core.events import BlockFinished, DraftChanged, Event
from vis_core.host import Host, HostOptions

from .conftest import git, make_repo

ENTER = 'r = await draft_create("work")\nprint(r["backend"], r["root"])'
WORK = """
import os
open("a.txt", "w").write("from python\\n")
h = await shell("echo from-shell > sh.txt")
await h.wait(30)
print(os.getcwd())
print(session["workspace_root"])
print(await cat("b.txt"))
await patch("b.txt", 1, [{"start": 1, "end": 1, "text": "patched\\n"}])
"""


def _script(tmp_path: Path, *responses: dict) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(list(responses)), encoding="utf-8")
    return script


async def _open(workspace: Path, script: Path) -> Host:
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


@pytest.mark.parametrize("jail", [False, True], ids=["jail-off", "jail-on"])
async def test_everything_a_session_does_in_a_draft_lands_in_the_draft(
    workspace: Path, tmp_path: Path, vis_home: Path, jail: bool
) -> None:
    (vis_home / "config.toml").write_text(f"jail = {str(jail).lower()}\n")
    repo = make_repo(workspace)
    script = _script(
        tmp_path,
        {"code": ENTER},
        {"code": WORK},
        {"text": "done"},
    )
    host = await _open(repo, script)
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("work in a draft")
        blocks = [e for e in seen if isinstance(e, BlockFinished)]
        assert [b.error for b in blocks] == [None, None], blocks
        assert session.drafts is not None and session.drafts.draft is not None
        root = Path(session.drafts.draft.root)
        assert blocks[0].stdout.split() == ["worktree", str(root)]
        restart, cwd, workspace_root = blocks[1].stdout.splitlines()[:3]
        assert restart.startswith(f"[sandbox] The sandbox process moved to {root}")
        assert Path(cwd) == root and Path(workspace_root) == root
        assert (root / "a.txt").read_text() == "from python\n"
        assert (root / "sh.txt").read_text() == "from-shell\n"
        assert (root / "b.txt").read_text() == "patched\n"
        assert (repo / "b.txt").read_text() == "bee\n"
        assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
        assert not (repo / "sh.txt").exists()
        assert git(repo, "status", "--porcelain") == ""
        marks = [e for e in seen if isinstance(e, DraftChanged)]
        assert [m.action for m in marks] == ["entered"] and marks[0].label == "work"
    finally:
        await host.close()

    # resumed later: back in its draft
    host = await _open(
        repo, _script(tmp_path, {"code": "print(session['workspace_root'])"}, {"text": "ok"})
    )
    try:
        resumed = await host.open_session(session.id)
        assert resumed.drafts is not None and resumed.drafts.draft is not None
        assert resumed.drafts.roots().workspace == root
        blocks = []
        resumed.subscribe(lambda e: blocks.append(e) if isinstance(e, BlockFinished) else None)
        await resumed.submit("where")
        assert blocks[0].stdout.splitlines()[-1] == str(root)
    finally:
        await host.close()


async def test_the_model_cannot_approve_alone_and_discard_leaves_the_live_tree(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    repo = make_repo(workspace)
    script = _script(
        tmp_path,
        {"code": ENTER},
        {"code": 'open("b.txt", "w").write("drafted\\n")\nawait draft_approve("ship it")'},
        {"code": "await draft_discard()"},
        {"code": "import os\nprint(os.getcwd())"},
        {"text": "done"},
    )
    host = await _open(repo, script)
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("try")
        blocks = [e for e in seen if isinstance(e, BlockFinished)]
        assert blocks[1].error is not None and "did not approve" in blocks[1].error
        assert blocks[2].error is None and blocks[3].error is None
        assert blocks[2].files == ()  # leaving the draft is not a change the block made
        assert Path(blocks[3].stdout.splitlines()[-1]) == repo
        assert (repo / "b.txt").read_text() == "bee\n"
        assert host.drafts.listed() == []
        assert session.drafts is not None and session.drafts.draft is None
        marks = [e.action for e in seen if isinstance(e, DraftChanged)]
        assert marks == ["entered", "discarded"]
    finally:
        await host.close()


async def test_with_the_setting_the_model_approves_and_the_session_leaves_the_draft(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = false\ndraft_model_approves = true\n")
    repo = make_repo(workspace)
    (repo / "a.txt").write_text("carried\n")  # the person's uncommitted change
    script = _script(
        tmp_path,
        {"code": ENTER},
        {"code": 'open("b.txt", "w").write("drafted\\n")\nprint(await draft_approve("ship"))'},
        {"code": "import os\nprint(os.getcwd())"},
        {"text": "done"},
    )
    host = await _open(repo, script)
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("ship")
        blocks = [e for e in seen if isinstance(e, BlockFinished)]
        assert [b.error for b in blocks] == [None, None, None]
        assert Path(blocks[2].stdout.splitlines()[-1]) == repo
        assert (repo / "b.txt").read_text() == "drafted\n"
        assert (repo / "a.txt").read_text() == "carried\n"
        assert git(repo, "status", "--porcelain") == "M a.txt"  # the person's, still theirs
        assert git(repo, "log", "-1", "--format=%s") == "ship"
        assert git(repo, "show", "--format=", "--name-only", "main") == "b.txt"
    finally:
        await host.close()


KILLED = """
import asyncio, subprocess, sys
from pathlib import Path

import yaml

from vis_core.host import Host, HostOptions


async def main() -> None:
    script = Path(sys.argv[2])
    host = await Host.open(
        HostOptions(workspace=Path(sys.argv[1]), provider="scripted", script=script)
    )
    session = await host.new_session()
    print(session.id, flush=True)
    await session.submit("go")


asyncio.run(main())
"""


@pytest.mark.parametrize("jail", [False, True], ids=["jail-off", "jail-on"])
async def test_a_draft_left_by_a_killed_vis_is_listed_never_merged(
    workspace: Path, tmp_path: Path, vis_home: Path, jail: bool
) -> None:
    (vis_home / "config.toml").write_text(f"jail = {str(jail).lower()}\n")
    repo = make_repo(workspace)
    script = _script(
        tmp_path,
        {"code": ENTER},
        {
            "code": 'open("b.txt", "w").write("half done\\n")\n'
            "open('entered', 'w').write('x')\n"  # in the draft: the jail shows nothing else
            "import time\ntime.sleep(300)"
        },
    )
    runner = tmp_path / "run.py"
    runner.write_text(KILLED)
    proc = subprocess.Popen(
        [sys.executable, str(runner), str(repo), str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        session_id = proc.stdout.readline().strip()
        while not list(vis_home.glob("drafts/*/tree/entered")):
            assert proc.poll() is None, "vis ended before the block ran"
            await __import__("asyncio").sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    host = await _open(repo, _script(tmp_path, {"text": "hi"}))
    try:
        listed = host.drafts.listed()
        assert [(d.label, d.session_id) for d in listed] == [("work", session_id)]
        assert (Path(listed[0].root) / "b.txt").read_text() == "half done\n"
        assert (repo / "b.txt").read_text() == "bee\n" and not (repo / "entered").exists()
        resumed = await host.open_session(session_id)
        assert resumed.drafts is not None and resumed.drafts.draft == listed[0]
    finally:
        await host.close()


async def test_with_the_jail_off_the_rest_of_the_block_already_writes_in_the_draft(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    repo = make_repo(workspace)
    code = 'await draft_create("now")\nopen("b.txt", "w").write("same block\\n")'
    host = await _open(repo, _script(tmp_path, {"code": code}, {"text": "done"}))
    try:
        session = await host.new_session()
        await session.submit("go")
        assert session.drafts is not None and session.drafts.draft is not None
        assert (Path(session.drafts.draft.root) / "b.txt").read_text() == "same block\n"
        assert (repo / "b.txt").read_text() == "bee\n"
    finally:
        await host.close()


ATTACK = """
import os
live = os.getcwd()
await draft_create("now")
open("b.txt", "w").write("same block\\n")
for name in ("a.txt", "new.txt"):
    try:
        open(os.path.join(live, name), "w").write("reached the live tree\\n")
        print("written", name)
    except OSError as exc:
        print("refused", name, exc.errno)
h = await shell(f"echo x > {live}/sh.txt; echo y > sh.txt")
await h.wait(30)
print(os.getcwd())
"""


async def test_with_the_jail_on_the_rest_of_the_block_writes_in_the_draft_only(
    workspace: Path, tmp_path: Path
) -> None:
    """The jail on: after draft_create, a relative write of the same block lands in the
    draft and an absolute path into the live workspace (Python or a child process) is
    refused (read-only file system) for the rest of the block."""
    repo = make_repo(workspace)
    host = await _open(repo, _script(tmp_path, {"code": ATTACK}, {"text": "done"}))
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("go")
        block = next(e for e in seen if isinstance(e, BlockFinished))
        assert block.error is None, block
        assert session.drafts is not None and session.drafts.draft is not None
        root = Path(session.drafts.draft.root)
        lines = block.stdout.splitlines()
        assert lines[:2] == ["refused a.txt 30", "refused new.txt 30"]  # EROFS
        assert Path(lines[-1]) == root
        assert (root / "b.txt").read_text() == "same block\n"
        assert (root / "sh.txt").read_text() == "y\n"
        assert (repo / "b.txt").read_text() == "bee\n"
        assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
        assert not (repo / "new.txt").exists() and not (repo / "sh.txt").exists()
        assert git(repo, "status", "--porcelain") == ""
    finally:
        await host.close()


async def test_a_live_file_held_open_for_writing_ends_the_block_at_draft_create(
    workspace: Path, tmp_path: Path
) -> None:
    """A file of the live workspace opened for writing before draft_create would let the
    rest of the block write it: the jail cannot be made read-only then, so the block ends
    there, and the next block runs in the draft."""
    repo = make_repo(workspace)
    held = 'f = open("a.txt", "a")\nawait draft_create("held")\nf.write("late\\n")\nf.close()'
    script = _script(
        tmp_path, {"code": held}, {"code": "import os\nprint(os.getcwd())"}, {"text": "ok"}
    )
    host = await _open(repo, script)
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("go")
        blocks = [e for e in seen if isinstance(e, BlockFinished)]
        assert blocks[0].error is not None
        assert "stopped when the session entered its draft" in blocks[0].error
        assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
        assert session.drafts is not None and session.drafts.draft is not None
        assert blocks[1].error is None
        assert Path(blocks[1].stdout.splitlines()[-1]) == Path(session.drafts.draft.root)
    finally:
        await host.close()


@pytest.mark.parametrize("jail", [False, True], ids=["jail-off", "jail-on"])
async def test_a_folder_outside_git_gets_a_copy_draft_and_undo_works_in_it(
    workspace: Path, tmp_path: Path, vis_home: Path, jail: bool
) -> None:
    from vis_core.agent.person_input import undo

    (vis_home / "config.toml").write_text(f"jail = {str(jail).lower()}\n")
    (workspace / "notes.md").write_text("live notes\n")
    script = _script(
        tmp_path,
        {"code": 'r = await draft_create("plain")\nprint(r["backend"])'},
        {"text": "in"},
        {"code": 'open("notes.md", "w").write("drafted\\n")\nprint(open("notes.md").read())'},
        {"text": "edited"},
    )
    host = await _open(workspace, script)
    try:
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(lambda e: blocks.append(e) if isinstance(e, BlockFinished) else None)
        await session.submit("enter")
        assert blocks[0].error is None and blocks[0].stdout.strip() == "copy"
        await session.submit("edit")
        assert blocks[1].error is None, blocks[1].error
        assert session.drafts is not None and session.drafts.draft is not None
        root = Path(session.drafts.draft.root)
        assert (root / "notes.md").read_text() == "drafted\n"
        assert (workspace / "notes.md").read_text() == "live notes\n"

        report = await undo(session)  # /undo: the draft's file as before the turn

        assert report.restored == ("notes.md",)
        assert (root / "notes.md").read_text() == "live notes\n"
        assert (workspace / "notes.md").read_text() == "live notes\n"
    finally:
        await host.close()


async def test_a_draft_discarded_elsewhere_sends_the_session_back_to_the_workspace(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    repo = make_repo(workspace)
    script = _script(
        tmp_path,
        {"code": ENTER},
        {"text": "in"},
        {"code": "import os\nprint(os.getcwd())"},
        {"text": "where"},
    )
    host = await _open(repo, script)
    try:
        session = await host.new_session()
        seen: list[Event] = []
        session.subscribe(seen.append)
        await session.submit("enter")
        assert session.drafts is not None and session.drafts.draft is not None
        host.drafts.discard(session.drafts.draft)  # as `vis drafts discard` does
        await session.submit("where am I")
        blocks = [e for e in seen if isinstance(e, BlockFinished)]
        assert Path(blocks[-1].stdout.splitlines()[-1]) == repo
        assert session.drafts.draft is None
        assert [e.action for e in seen if isinstance(e, DraftChanged)] == ["entered", "discarded"]
    finally:
        await host.close()


async def test_two_sessions_in_two_drafts_edit_the_same_file(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = false\ndraft_model_approves = true\n")
    repo = make_repo(workspace)
    edit = (  # each session: its own draft, the same file, its own text
        'await draft_create("s" + session["id"][:8])\n'
        'open("b.txt", "w").write(session["id"] + "\\n")'
    )
    approve = (
        "try:\n    print(await draft_approve())\nexcept Exception as e:\n    print('refused:', e)"
    )
    script = _script(
        tmp_path, {"code": edit}, {"text": "edited"}, {"code": approve}, {"text": "asked"}
    )
    host = await _open(repo, script)
    try:
        first, second = await host.new_session(), await host.new_session()
        printed: dict[str, list[str]] = {first.id: [], second.id: []}
        for session in (first, second):
            session.subscribe(
                lambda e: (
                    printed[e.session_id].append(e.stdout) if isinstance(e, BlockFinished) else None
                )
            )
        await first.submit("edit")
        await second.submit("edit")
        assert first.drafts is not None and second.drafts is not None
        one, two = first.drafts.draft, second.drafts.draft
        assert one is not None and two is not None and one.root != two.root
        assert (Path(one.root) / "b.txt").read_text() == first.id + "\n"
        assert (Path(two.root) / "b.txt").read_text() == second.id + "\n"
        assert (repo / "b.txt").read_text() == "bee\n"

        await first.submit("approve")
        assert (repo / "b.txt").read_text() == first.id + "\n"
        await second.submit("approve")
        said = printed[second.id][-1]
        assert "refused:" in said and "conflict" in said and "b.txt" in said
        assert (repo / "b.txt").read_text() == first.id + "\n"
        assert second.drafts.draft == two  # still there, to sync or discard
    finally:
        await host.close()


async def test_the_persons_at_file_and_bang_command_act_on_the_draft(
    workspace: Path, tmp_path: Path
) -> None:
    """``@file`` reads the draft's file and ``!command`` runs in the draft (jail on)."""
    from vis_core.events import UserContext

    repo = make_repo(workspace)
    host = await _open(repo, _script(tmp_path, {"text": "seen"}))
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        assert session.drafts is not None
        draft = await session.drafts.create("person")
        root = Path(draft.root)
        (root / "b.txt").write_text("the draft's bee\n")

        await session.submit("!pwd; echo made > made.txt", command=True)
        await session.submit("look", mentions=["b.txt"])

        context = [e for e in seen if isinstance(e, UserContext)]
        ran, attached = context[0].text, context[1].text
        assert str(root) in ran
        assert (root / "made.txt").read_text() == "made\n" and not (repo / "made.txt").exists()
        assert "the draft's bee" in attached and (repo / "b.txt").read_text() == "bee\n"
    finally:
        await host.close()


async def test_run_tests_in_a_draft_uses_the_workspaces_ignored_environment(
    workspace: Path, tmp_path: Path
) -> None:
    """git leaves an ignored ``.venv/`` out of a draft: run_tests in the draft runs the
    draft's tests with the live workspace's environment (shown read-only in the jail)."""
    repo = make_repo(workspace)
    (repo / ".gitignore").write_text("ignored/\n.venv/\n")
    (repo / "pytest.ini").write_text("[pytest]\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text(
        "def test_a():\n    assert open('a.txt').read() == 'one\\ntwo\\nthree\\n'\n"
    )
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    # stands in for the environment's python: says where it ran and what a.txt holds there
    python.write_text('#!/bin/sh\necho "ran in $(pwd)"; cat a.txt\n')
    python.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests")
    run = (
        'open("a.txt", "w").write("drafted\\n")\n'
        "r = await run_tests()\nprint(r.command)\nprint(r.output)"
    )
    script = _script(tmp_path, {"code": ENTER}, {"code": run}, {"text": "done"})
    host = await _open(repo, script)
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("test the draft")
        block = [e for e in seen if isinstance(e, BlockFinished)][1]
        assert block.error is None, block.error
        assert session.drafts is not None and session.drafts.draft is not None
        assert f"{python} -m pytest" in block.stdout
        assert f"ran in {session.drafts.draft.root}\ndrafted" in block.stdout
        assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
    finally:
        await host.close()


async def test_a_command_started_before_draft_create_writes_no_more_in_the_live_tree(
    workspace: Path, tmp_path: Path
) -> None:
    """A shell command started in the live workspace runs in a jail (or none) of its own,
    which the draft does not move: entering the draft stops it, so that it cannot write
    there afterwards (here: told to, through its input)."""
    repo = make_repo(workspace)
    code = (
        'h = await shell("read line; echo $line > typed.txt")\n'
        'await draft_create("now")\n'
        "try:\n"
        '    await h.type("late\\n")\n'
        "except RuntimeError as exc:\n"
        '    print("refused", "has exited" in str(exc))\n'
        "print((await h.wait(10)).state)\n"
    )
    host = await _open(repo, _script(tmp_path, {"code": code}, {"text": "done"}))
    seen: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(seen.append)
        await session.submit("go")
    finally:
        await host.close()
    block = next(e for e in seen if isinstance(e, BlockFinished))
    assert block.error is None, block
    assert block.stdout.split()[:2] == ["refused", "True"], block.stdout
    assert not (repo / "typed.txt").exists()
    assert git(repo, "status", "--porcelain") == ""


async def test_slash_draft_shows_file_names_the_model_chose_as_code_whatever_they_hold(
    workspace: Path, tmp_path: Path
) -> None:
    """A file name holding backticks and Markdown (the model's choice) is one code span in
    what ``/draft sync`` and ``/draft approve`` say: it cannot close the span and write bold
    text or a link of its own into Vis's message (the app and ACP render it as Markdown)."""
    from markdown_it import MarkdownIt

    repo = make_repo(workspace)
    odd = "x` **Vis checked: safe** [ok](https:evil.example) `.txt"
    plant = f'await draft_create("names")\nopen({odd!r}, "w").write("hi\\n")'
    host = await _open(repo, _script(tmp_path, {"code": plant}, {"text": "done"}))
    try:
        session = await host.new_session()
        await session.submit("name a file")
        approved = await host.commands.run(session, "/draft approve names")
    finally:
        await host.close()
    assert approved.ok, approved.body
    tokens = [t for b in MarkdownIt().parse(approved.body or "") for t in b.children or ()]
    assert [t.content for t in tokens if t.type == "code_inline"] == [odd]
    assert not [t for t in tokens if t.type in ("strong_open", "link_open")]
    assert (repo / odd).read_text() == "hi\n"


async def test_a_fork_after_draft_discard_is_out_of_the_draft_like_its_source(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    """The fork copied events up to the last turn's end: the /draft discard after it was left
    out, and the fork's transcript said it was still working in the draft."""
    repo = make_repo(workspace)
    host = await _open(repo, _script(tmp_path, {"code": ENTER}, {"text": "in"}))
    try:
        session = await host.new_session()
        await session.submit("enter")
        discarded = await host.commands.run(session, "/draft discard")
        forked = await host.commands.run(session, "/fork")
        marks = [s.event.action for s in host.store.events(forked.data, types={DraftChanged.type})]
        fork = await host.open_session(forked.data)
    finally:
        await host.close()
    assert discarded.ok, discarded.body
    assert marks == ["entered", "discarded"]
    assert fork.drafts is not None and fork.drafts.draft is None
