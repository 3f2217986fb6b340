"""After `kill -9` mid-turn nothing that was shown is lost: the lines a running block printed
and the answer that was streaming are in `vis export` (which says the turn was interrupted,
no Vis running it), in the resumed session and in what the model reads next."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import yaml
from warm_servers import vis_command

TICKS = 'import time\nfor i in range(600):\n    print("tick", i, flush=True); time.sleep(0.05)'


def _env(vis_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    return env


def _run_until_killed(
    workspace: Path, vis_home: Path, script: list[dict], enough: Callable[[dict], bool]
) -> list[dict]:
    """`vis run --json` with ``script``, killed with SIGKILL once a printed event is
    ``enough``; the events it printed (each was committed before it was printed)."""
    path = workspace.parent / "script.json"
    path.write_text(json.dumps(script))
    proc = subprocess.Popen(
        [*vis_command(env=_env(vis_home)), "run", "--json", "--provider", "scripted"]
        + ["--script", str(path), "crash me"],
        cwd=workspace,
        env=_env(vis_home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    printed: list[dict] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            printed.append(json.loads(line))
            if enough(printed[-1]):
                break
        else:
            raise AssertionError(f"vis run ended first: {proc.stderr.read()}")  # type: ignore[union-attr]
    finally:
        proc.kill()  # SIGKILL
        proc.wait(timeout=10)
    return printed


def _export(workspace: Path, vis_home: Path) -> str:
    done = subprocess.run(
        vis_command("export", env=_env(vis_home)),
        cwd=workspace,
        env=_env(vis_home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _resume(workspace: Path, tmp_path: Path, request: str) -> tuple[str, str]:
    """The session opened again (a model answering ``after``), asked ``request``: its
    Markdown export then, and all the model was sent."""
    import asyncio

    from vis_core.host import Host, HostOptions
    from vis_core.session_files import ExportFormat, export_session

    script = tmp_path / "after.yaml"
    script.write_text(yaml.safe_dump([{"text": "after"}]), encoding="utf-8")

    async def resume() -> tuple[str, str]:
        host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
        try:
            (row,) = host.store.list_sessions()
            session = await host.open_session(row.id)
            exported = export_session(host.store, row, ExportFormat.MD)
            await session.submit(request)
            sent = session.model.provider.requests[-1]  # type: ignore[union-attr]
            return exported, "\n".join(message.text for message in sent.messages)
        finally:
            await host.close()

    return asyncio.run(resume())


def test_after_kill_9_what_a_running_block_printed_is_exported_and_resumed(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    pieces: list[str] = []

    def enough(event: dict) -> bool:
        """Three pieces of output, each committed and printed apart (however loaded the
        machine, the block ticks on for 30 s)."""
        if event["type"] == "BlockPrinted":
            pieces.append(event["text"])
        return len(pieces) == 3

    _run_until_killed(workspace, vis_home, [{"code": TICKS}, {"text": "never"}], enough)
    shown = "".join(pieces)
    assert shown.startswith("tick 0\ntick 1\n")

    before = _export(workspace, vis_home)  # nobody resumed it: no Vis runs that turn
    assert "## Turn 1 (cancelled)" in before and "(running)" not in before
    assert "**Error:** interrupted: Vis stopped" in before
    assert shown.rstrip("\n") in before.split("Output:", 1)[1]

    after, sent = _resume(workspace, tmp_path, "what happened?")
    assert after.count("**Error:** interrupted") == 1
    assert shown.rstrip("\n") in after.split("Output:", 1)[1]
    assert "interrupted: Vis stopped (it was killed or crashed) while this ran" in after
    assert shown.rstrip("\n") in sent and "while this ran" in sent  # the model is told too


def test_after_kill_9_the_answer_that_was_streaming_is_exported_and_resumed(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    words = " ".join(f"word{i}" for i in range(300))
    streamed: list[str] = []

    def enough(event: dict) -> bool:
        if event["type"] == "AssistantDelta":
            streamed.append(event["text"])
        return len("".join(streamed)) > 60

    _run_until_killed(workspace, vis_home, [{"text": words, "chunk": 4, "delay_ms": 50}], enough)
    shown = "".join(streamed)
    assert words.startswith(shown)

    before = _export(workspace, vis_home)
    assert "## Turn 1 (cancelled)" in before and "(running)" not in before
    assert f"**Vis:**\n\n{shown}" in before and "interrupted: Vis stopped" in before

    after, sent = _resume(workspace, tmp_path, "go on")
    assert f"**Vis:**\n\n{shown}" in after and "interrupted: Vis stopped" in after
    assert shown in sent and "broke off here: Vis stopped" in sent
