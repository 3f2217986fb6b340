"""Broken trust lists, deep files, bad `vis trust` paths and unusable values: named, exit 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_support import script as _script
from cli_support import vis as _vis

from vis_core.cli import main

DEEP_TOML = "a = " + "[" * 3000 + "]" * 3000 + "\n"


def _clean(done, *names: str) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    for name in names:
        assert name in done.stderr, done.stderr


@pytest.mark.parametrize(
    "content",
    [
        '{"trusted": 5}',
        "not json",
        "[1, 2]",
        '{"trusted": ["/a", 7]}',
        '{"trusted": ["/a"], "fingerprints": {"/a": 5}}',
        '{"trusted": [], "fingerprints": []}',
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["number", "not-json", "list", "path-type", "print-type", "prints-list", "deep"],
)
def test_a_broken_trust_list_is_a_named_error_and_is_kept(
    workspace: Path,
    vis_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
) -> None:
    trust_list = vis_home / "trusted.json"
    trust_list.write_text(content, encoding="utf-8")
    script = _script(tmp_path, [{"text": "hi"}])
    run = ("run", "--provider", "scripted", "--script", str(script), "go")
    _clean(_vis(*run, cwd=workspace, env_home=vis_home), str(trust_list), "trust list")
    for args in (("trust", str(workspace)), ("doctor",), ("settings", "list")):
        _clean(_in_process(capsys, workspace, *args), str(trust_list), "trust list")
    assert trust_list.read_text(encoding="utf-8") == content


@pytest.mark.parametrize("where", ["config.toml", ".vis/settings.toml", "vis.yml", "secrets"])
def test_a_file_nested_3000_deep_is_a_named_error(
    workspace: Path, vis_home: Path, tmp_path: Path, where: str
) -> None:
    content = {
        "vis.yml": "toggles:\n  a: " + "[" * 3000 + "]" * 3000 + "\n",
        "secrets": "[" * 100_000 + "]" * 100_000,
    }.get(where, DEEP_TOML)
    target = vis_home / where if where in ("config.toml", "secrets") else workspace / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    if where.startswith((".vis", "vis.yml")):
        assert _vis("trust", str(workspace), cwd=workspace, env_home=vis_home).returncode == 0
    script = _script(tmp_path, [{"code": "open('ran.txt', 'w').write('x')"}, {"text": "hi"}])
    done = _vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "go",
        cwd=workspace,
        env_home=vis_home,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert str(target) in done.stderr, done.stderr
    if where != "secrets":  # the settings files decide what may run: nothing runs
        assert done.returncode == 2, done.stderr
        assert not (workspace / "ran.txt").exists()
    if where == "config.toml":  # said once, as why nothing runs (it was also logged raw,
        # and 'Vis uses its defaults' contradicted the refusal: three lines)
        said = [line for line in done.stderr.splitlines() if str(target) in line]
        assert len(said) == 1 and said[0].startswith("vis run: Vis runs nothing"), done.stderr
    saved = _vis("settings", "set", "summarize_steps", "false", cwd=workspace, env_home=vis_home)
    if where == "config.toml":
        _clean(saved, str(target))
    assert target.read_text(encoding="utf-8") == content


def test_vis_trust_of_a_missing_path_or_a_file_is_a_named_error(
    workspace: Path, vis_home: Path
) -> None:
    (workspace / "notes.txt").write_text("x", encoding="utf-8")
    for path, why in (
        (workspace / "missing", "does not exist"),
        (workspace / "notes.txt", "not a folder"),
    ):
        _clean(_vis("trust", str(path), cwd=workspace, env_home=vis_home), str(path), why)
    assert not (vis_home / "trusted.json").exists()


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (("model", "bad model"), "takes provider/model"),
        (("model", "nope"), "takes provider/model"),
        (("model", "acme/m1"), "unknown provider 'acme'"),
        (("model", "openai/gpt 5"), "without spaces"),
        (("jail", "ture"), "takes true or false"),
        (("max_iterations", "7"), "takes one of"),
        (("memory_limit", "lots"), "takes one of"),
        (("theme", "nord", "--scope", "project"), "only at 'global' scope"),
        (("missing", "1"), "no setting 'missing'"),
        (("jail", "true", "--scope", "session", "--session", "nope"), "no session 'nope'"),
        # the command line's options, not the app's session and /group
        (("jail", "true", "--scope", "session"), "session scope needs --session ID"),
        (("jail", "true", "--scope", "group"), "group scope needs --group NAME, or --session"),
        (("max_iterations", "10", "--scope", "project"), "until you trust this project"),
        # an option the scope would ignore
        (("max_iterations", "10", "--group", "g1"), "--group is for --scope group"),
        (("jail", "true", "--scope", "project", "--group", "g1"), "--group is for --scope group"),
        (("max_iterations", "10", "--session", "nope"), "--session is for --scope session"),
    ],
)
def test_vis_settings_set_refuses_what_cannot_be_used_and_saves_nothing(
    workspace: Path,
    vis_home: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    why: str,
) -> None:
    _clean(_in_process(capsys, workspace, "settings", "set", *args), why)
    assert not (vis_home / "config.toml").exists()
    assert not (workspace / ".vis").exists()
    listing = _in_process(capsys, workspace, "settings", "list", "--json")
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    assert {row["source"] for row in rows} == {"default"}


def test_a_usable_model_is_saved(
    workspace: Path, vis_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (vis_home / "config.toml").write_text(
        '[providers.acme]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8"
    )
    for value in ("acme/m1", "openai/gpt-5"):
        done = _in_process(capsys, workspace, "settings", "set", "model", value)
        assert done.returncode == 0, done.stderr
        got = _in_process(capsys, workspace, "settings", "get", "model")
        assert got.stdout.strip() == value


def _in_process(
    capsys: pytest.CaptureFixture[str], workspace: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """``vis ARGS`` in this process (its own VIS_HOME: the autouse fixture), as ``vis`` runs
    it; a process start each was most of these tests' time."""
    capsys.readouterr()
    code = main(["-C", str(workspace), *args])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["vis", *args], code, out, err)


def test_vis_settings_set_at_group_scope_for_a_session_in_no_group_asks_for_group(
    workspace: Path, vis_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said '… this session is in no group; move it into one with /group NAME', the app's
    words; the command line's is --group NAME."""
    import asyncio

    from .support import open_host

    async def new_session() -> str:
        host = await open_host(workspace, script=_script(tmp_path, [{"text": "ok"}]))
        try:
            session = await host.new_session()
            await session.submit("hi")  # a session is kept from its first turn
            return session.id
        finally:
            await host.close()

    session_id = asyncio.run(new_session())
    args = ("settings", "set", "jail", "true", "--scope", "group", "--session", session_id)
    done = _in_process(capsys, workspace, *args)
    _clean(done, f"setting 'jail': session {session_id} is in no group; give --group NAME")
    assert "/group" not in done.stderr
    assert _in_process(capsys, workspace, *args, "--group", "team").returncode == 0


def test_vis_settings_get_and_list_check_the_session_as_set_does(
    workspace: Path, vis_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``get``/``list --session`` of no session are refused as ``set`` refuses it (they printed
    the default, exit 0); a prefix names the session for all three (``set`` saved under the
    prefix, a key no session has)."""
    ok = _script(tmp_path, [{"text": "ok"}])
    run = _vis(
        "run", "--provider", "scripted", "--script", str(ok), "hi", cwd=workspace, env_home=vis_home
    )
    assert run.returncode == 0, run.stderr
    for verb in (("get", "max_iterations"), ("list",)):
        _clean(_in_process(capsys, workspace, "settings", *verb, "--session", "zzzz"), "zzzz")
    from vis_core.store import Store

    with Store(vis_home / "vis.db") as store:
        [row] = store.list_sessions(workspace.resolve())
    put = ("settings", "set", "max_iterations", "10", "--scope", "session", "--session")
    assert _in_process(capsys, workspace, *put, row.id[:8]).returncode == 0
    for session in (row.id, row.id[:8]):
        got = _in_process(
            capsys, workspace, "settings", "get", "max_iterations", "--session", session
        )
        assert (got.returncode, got.stdout.strip()) == (0, "10"), got.stderr
