"""A key Vis reads from the environment is a secret: a server that echoes the Authorization
header never gets it into vis.db, the log, stderr or ``--json``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_support import script, vis
from warm_servers import vis_command

from vis_core.mcp.values import expand_map, expanded_keys
from vis_core.settings.redact import Redactor
from vis_core.system.redaction import environment_secrets

from .wire_servers import (
    RecordedRequest,
    WireReply,
    WireServer,
    WireToolCall,
    openai_error,
    openai_reply,
)

KEY = "sk-env-4a7f0c9e2b1d8836"
OTHER = "own-endpoint-key-77e1c0"


def _everything(home: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in home.rglob("*") if p.is_file() and p.name != "config.toml"
    )


def _vis_run(
    home: Path, workspace: Path, model: str, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(VIS_HOME=str(home), OPENAI_API_KEY=KEY, MY_ENDPOINT_CRED=OTHER)
    return subprocess.run(
        [*vis_command(env=env), "run", *args, "--model", model, "show me"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _echo_in_text(request: RecordedRequest) -> WireReply:
    return openai_reply(f"your header was {request.headers.get('authorization')}")


def _echo_in_error(request: RecordedRequest) -> WireReply:
    header = request.headers.get("authorization")
    return openai_error(400, f"invalid key in header {header}", "invalid_request_error")


def test_an_echoed_environment_key_is_redacted_everywhere(vis_home: Path, workspace: Path) -> None:
    for echo in (_echo_in_text, _echo_in_error):
        with WireServer(checks=echo) as server:
            (vis_home / "config.toml").write_text(
                f'[providers.openai]\nbase_url = "{server.openai_base_url}"\n'
                f'[providers.mine]\nkind = "openai"\nbase_url = "{server.openai_base_url}"\n'
                'api_key_env = "MY_ENDPOINT_CRED"\n',
                encoding="utf-8",
            )
            for model, key in (("openai/gpt-4o", KEY), ("mine/m", OTHER)):
                for args in (["--json"], []):
                    done = _vis_run(vis_home, workspace, model, *args)
                    assert done.returncode == (0 if echo is _echo_in_text else 1), done.stderr
                    assert key not in done.stdout + done.stderr
                    assert "Bearer [REDACTED]" in done.stdout + done.stderr
        assert server.requests and all(
            r.headers["authorization"] in (f"Bearer {KEY}", f"Bearer {OTHER}")
            for r in server.requests
        )  # the server did get the key: it was sent, and echoed back
    stored = _everything(vis_home)
    assert KEY.encode() not in stored and OTHER.encode() not in stored
    assert b"[REDACTED]" in stored


def test_a_key_streamed_in_small_pieces_is_never_printed_or_stored_split(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Streamed text is sent in batches; a batch that ended inside the key would be redacted
    apart from the rest, and both halves printed. Three characters every 40 ms put a batch
    boundary inside the key, whatever the machine's load."""
    answer = f"the token is {KEY}, and {KEY[:6]} is not one"
    responses = [{"text": answer, "chunk": 3, "delay_ms": 40}]
    for args in (["--json"], []):
        done = vis(
            "run",
            *args,
            "--provider",
            "scripted",
            "--script",
            str(script(tmp_path, responses)),
            "show me",
            cwd=workspace,
            env_home=vis_home,
            extra_env={"MY_SERVICE_TOKEN": KEY},
        )
        assert done.returncode == 0, done.stderr
        assert KEY not in done.stdout + done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()] if args else []
        deltas = [e["text"] for e in events if e["type"] == "AssistantDelta"]
        streamed = "".join(deltas) if args else done.stdout
        assert f"the token is [REDACTED], and {KEY[:6]} is not one" in streamed
        assert not args or len(deltas) > 3  # it was streamed in pieces
    assert KEY.encode() not in _everything(vis_home)


def test_a_key_echoed_into_a_tool_call_id_is_redacted(vis_home: Path, workspace: Path) -> None:
    def echo(request: RecordedRequest) -> WireReply:
        key = request.headers["authorization"].removeprefix("Bearer ")
        if len(server.requests) == 1:
            call = WireToolCall(f"call_{key}", "python_execution", {"code": "print(1)"})
            return openai_reply(tool_calls=[call])
        return openai_reply("done")

    with WireServer(checks=echo) as server:
        (vis_home / "config.toml").write_text(
            f'[providers.openai]\nbase_url = "{server.openai_base_url}"\n', encoding="utf-8"
        )
        done = _vis_run(vis_home, workspace, "openai/gpt-4o", "--json")
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout + done.stderr
    assert '"code":"print(1)"' in done.stdout  # the call ran
    assert KEY.encode() not in _everything(vis_home)


def test_keys_an_mcp_server_config_expands_are_secrets() -> None:
    environ = {"GH_PAT": "ghp_0123456789abcdef", "HOME": "/home/someone", "SHORT_TOKEN": "x"}
    headers = (("Authorization", "Bearer ${GH_PAT}"),)
    expanded = expand_map(headers, "header", environ)
    assert expanded_keys(headers, expanded, all_keys=True, environ=environ) == [
        "Bearer ghp_0123456789abcdef",
        "ghp_0123456789abcdef",
    ]
    # a credential written in mcp.json as it is: the header's whole value and its token
    headers = (
        ("Authorization", "Bearer literal-token-0123456"),
        ("X-Api-Key", "literal-key-0123456"),
        ("Cookie", "session=literal-cookie-0123"),
        ("X-Team", "core-team-not-a-secret"),
    )
    expanded = expand_map(headers, "header", environ)
    assert expanded_keys(headers, expanded, all_keys=True, environ=environ) == [
        "Bearer literal-token-0123456",
        "literal-token-0123456",
        "literal-key-0123456",
        "session=literal-cookie-0123",
    ]
    env = (
        ("GITHUB_TOKEN", "${GH_PAT}"),
        ("WHERE", "${HOME}"),
        ("KEY_CMD_TOKEN", "!echo s3cret-from-cmd"),
        ("MY_API_KEY", "sk-literal-secret-123456"),  # a key written in the file as it is
        ("MODE", "sk-not-named-like-a-key"),
    )
    expanded = expand_map(env, "env", environ)
    assert expanded_keys(env, expanded, all_keys=False, environ=environ) == [
        "ghp_0123456789abcdef",
        "s3cret-from-cmd",
        "sk-literal-secret-123456",
    ]
    # variables named like keys are secrets; a short one is not (it would eat ordinary text)
    environ["GITHUB_TOKEN"] = "ghp_fedcba9876543210"
    assert environment_secrets(environ) == ["ghp_fedcba9876543210"]
    assert environment_secrets(environ, ["GH_PAT"]) == [
        "ghp_0123456789abcdef",
        "ghp_fedcba9876543210",
    ]
    redactor = Redactor(lambda: environment_secrets({"GITHUB_TOKEN": "ghp_0123456789abcdef"}))
    assert redactor.text("token ghp_0123456789abcdef") == "token [REDACTED]"
