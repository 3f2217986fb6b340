"""A secret typed or printed by mistake is redacted before it is written or printed anywhere."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from warm_servers import vis_command

from .support import open_host, user_extensions

SECRET = 'sk-live-9c1e55a0b7"quoted\\'
PLAIN_SECRET = "sk-live-4d2b8e61f0aa"


def _script(folder: Path) -> Path:
    path = folder / "script.json"
    long_output = f"python3 -c \"print('{PLAIN_SECRET}\\\\n' * 3000)\""
    code = f"sh = await shell({long_output!r})\nprint((await sh.wait(60)).output[-200:])"
    path.write_text(json.dumps([{"code": code}, {"text": "done"}]), encoding="utf-8")
    return path


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


async def test_titles_prompts_search_and_saved_outputs_never_hold_a_secret(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    user_extensions("reports")
    host = await open_host(workspace, script=_script(tmp_path))
    try:
        await host.settings.set("reports_server_token", SECRET, "global")
        await host.settings.set("reports_server_token", PLAIN_SECRET, "global")
        host.settings.secrets.write("other_token", SECRET)
        host.settings.refresh()
        session = await host.new_session()
        host.store.add_prompt(session.id, f"use {PLAIN_SECRET} and {SECRET}")
        ended = await session.submit(f"deploy with {PLAIN_SECRET} and {SECRET}")
        assert ended.status.value == "completed", ended
        row = host.store.get_session(session.id)
        assert row is not None and PLAIN_SECRET not in row.title and "[REDACTED]" in row.title
        assert [h.session.id for h in host.store.search_sessions("deploy")] == [session.id]
        assert not host.store.search_sessions(PLAIN_SECRET.replace("-", " "))
    finally:
        await host.close()
    stored = _all_bytes(vis_home / "vis.db") if (vis_home / "vis.db").is_dir() else b""
    stored += b"".join(p.read_bytes() for p in vis_home.glob("vis.db*"))
    outputs = vis_home / "outputs"
    saved = list(outputs.rglob("*.txt"))
    assert saved, "the long shell output was saved to a file"
    for secret in (PLAIN_SECRET, SECRET):
        assert secret.encode() not in stored
        assert json.dumps(secret).encode() not in stored
        assert secret.encode() not in _all_bytes(outputs)
    assert b"[REDACTED]" in _all_bytes(outputs)


def test_vis_run_json_stream_is_redacted(workspace: Path, vis_home: Path, tmp_path: Path) -> None:
    (vis_home / "secrets").write_text(json.dumps({"api_token": PLAIN_SECRET}))
    os.chmod(vis_home / "secrets", 0o600)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"code": f"print('{PLAIN_SECRET}')"}, {"text": PLAIN_SECRET}]))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(vis_home)
    for args in (["--json"], []):
        done = subprocess.run(
            [*vis_command(env=env), "run", *args, "--provider", "scripted"]
            + ["--script", str(script), f"say {PLAIN_SECRET}"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert PLAIN_SECRET not in done.stdout + done.stderr
        assert "[REDACTED]" in done.stdout


async def test_vis_files_are_private(workspace: Path, vis_home: Path, tmp_path: Path) -> None:
    os.chmod(vis_home, 0o755)
    host = await open_host(workspace, script=_script(tmp_path))
    try:
        session = await host.new_session()
        await session.submit("go")
        import logging

        logging.getLogger("vis_core.test").error("a line for the log file")
    finally:
        await host.close()
    folders = [vis_home, vis_home / "logs", vis_home / "outputs" / session.id]
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    files = [vis_home / "vis.db", *(vis_home / "logs").rglob("*.log")]
    files += list((vis_home / "outputs").rglob("*.txt"))
    assert len(files) >= 3
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
