"""`vis run --continue` and `vis run --resume ID`: one more turn in a stored session; `--json`
emits an event per fold."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import script, vis

from vis_core.store import Store


def _run(workspace: Path, vis_home: Path, s: Path, *args: str):
    return vis(
        "run",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(s),
        *args,
        cwd=workspace,
        env_home=vis_home,
    )


def _events(result) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_continue_and_resume_run_one_more_turn_in_a_stored_session(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    first = _events(_run(workspace, vis_home, script(tmp_path, [{"text": "one"}]), "first"))
    session_id = first[0]["session_id"]
    other = _events(_run(workspace, vis_home, script(tmp_path, [{"text": "x"}]), "other"))
    assert other[0]["session_id"] != session_id  # a plain run starts a new session

    # --continue: the latest session of this workspace (the "other" one)
    cont = _events(
        _run(workspace, vis_home, script(tmp_path, [{"text": "two"}]), "--continue", "again")
    )
    assert cont[0]["session_id"] == other[0]["session_id"]
    assert cont[0]["position"] == 2

    # --resume ID (a prefix works): that session, whichever is latest; the model sees the turns
    fold = "print(await fold_session('t1', 'the first turn said one'))"
    s = script(tmp_path, [{"code": fold}, {"text": "three"}])
    resumed = _events(_run(workspace, vis_home, s, "--resume", session_id[:10], "next"))
    assert {e["session_id"] for e in resumed} == {session_id}
    assert resumed[0]["type"] == "TurnStarted" and resumed[0]["position"] == 2
    folds = [e for e in resumed if e["type"] == "FoldCreated"]
    assert len(folds) == 1 and folds[0]["key"] == "t1" and folds[0]["spans"] == [[1, 0, 0]]
    assert folds[0]["gist"] == "the first turn said one"
    assert resumed[-1]["status"] == "completed"

    with Store(vis_home / "vis.db") as store:
        assert [t.request for t in store.turns(session_id)] == ["first", "next"]
        assert [f.key for f in store.folds(session_id)] == ["t1"]


def test_resume_and_continue_explain_what_is_missing(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    s = script(tmp_path, [{"text": "one"}])
    nothing = _run(workspace, vis_home, s, "--continue", "again")
    assert nothing.returncode == 2
    assert "no session in this workspace to continue" in nothing.stderr
    missing = _run(workspace, vis_home, s, "--resume", "feedface", "again")
    assert missing.returncode == 2
    assert "no session 'feedface'" in missing.stderr and "vis sessions" in missing.stderr
    both = _run(workspace, vis_home, s, "--resume", "x", "--continue", "again")
    assert both.returncode == 2 and "either --continue or --resume" in both.stderr


def test_a_session_is_resumed_only_from_its_own_folder(vis_home: Path, tmp_path: Path) -> None:
    """Run from another folder, `--resume ID` is refused naming the session's folder: its turns
    never read or change the files there, nor mix them into the session."""
    there, here = tmp_path / "there", tmp_path / "here"
    for folder in (there, here):
        folder.mkdir()
        (folder / "notes.txt").write_text(f"notes of {folder.name}\n")
    read = script(tmp_path, [{"code": "print(open('notes.txt').read())"}, {"text": "read"}])
    first = _events(_run(there, vis_home, read, "read the notes"))
    session_id = first[0]["session_id"]
    elsewhere = _run(here, vis_home, read, "--resume", session_id[:8], "again")
    assert elsewhere.returncode == 2
    assert f"belongs to {there.resolve()}" in elsewhere.stderr and "cd " in elsewhere.stderr
    assert "notes of here" not in elsewhere.stdout
    with Store(vis_home / "vis.db") as store:
        assert [t.request for t in store.turns(session_id)] == ["read the notes"]
    again = _events(_run(there, vis_home, read, "--resume", session_id[:8], "again"))
    assert any("notes of there" in json.dumps(e) for e in again)
