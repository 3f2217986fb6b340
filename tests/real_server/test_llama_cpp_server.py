"""Vis against a real llama-cpp-python server through ``vis run --json``: a text turn, a
forced ``python_execution`` turn and its follow-up request, and a request longer than the
server's context. Opt-in: ``bench/real_server.sh`` starts the server and sets
VIS_REAL_SERVER=1; without it these are skipped (they install and start nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MODEL = "local/smollm2"
pytestmark = pytest.mark.skipif(
    os.environ.get("VIS_REAL_SERVER") != "1",
    reason="needs a real server: run bench/real_server.sh",
)


@pytest.fixture
def server_url() -> str:
    return os.environ.get("VIS_REAL_SERVER_URL", "http://127.0.0.1:8765/v1")


def configure(vis_home: Path, url: str, **options: Any) -> None:
    """The README's local-server configuration, with ``input_limit`` as the server's n_ctx
    (llama-cpp-python does not report it)."""
    n_ctx = int(os.environ.get("VIS_REAL_SERVER_N_CTX", "8192"))
    lines = [
        f'model = "{MODEL}"',
        "[providers.local]",
        'kind = "openai"',
        f'base_url = "{url}"',
        'api_key_env = ""',
        "stall_timeout = 120",
        f'[models."{MODEL}"]',
        f"input_limit = {n_ctx}",
        *(f"{key} = {json.dumps(value)}" for key, value in options.items()),
    ]
    (vis_home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def vis_run(workspace: Path, request: str) -> tuple[int, list[dict[str, Any]], str]:
    vis = Path(sys.executable).with_name("vis")
    done = subprocess.run(
        [str(vis), "run", "--json", "-C", str(workspace), request],
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, done.stderr


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_a_text_turn(vis_home: Path, workspace: Path, server_url: str) -> None:
    configure(vis_home, server_url)
    code, events, stderr = vis_run(workspace, "Say hello in one short sentence.")
    [ended] = of_type(events, "TurnEnded")
    assert (code, ended["status"]) == (0, "completed"), (ended["error"], stderr)
    assert ended["content"].strip()
    [usage] = of_type(events, "UsageReported")
    assert usage["usage"]["input"] > 0 and usage["usage"]["output"] > 0


def test_a_forced_tool_turn_and_its_follow_up(
    vis_home: Path, workspace: Path, server_url: str
) -> None:
    configure(vis_home, server_url, tool_choice="python_execution")
    code, events, stderr = vis_run(workspace, "Use Python to print 6 * 7.")
    started = of_type(events, "IterationStarted")
    assert started and started[0]["tool"] == "python_execution", stderr
    assert of_type(events, "BlockFinished")
    [ended] = of_type(events, "TurnEnded")
    # The request after the tool result went through (it carries content "" beside the
    # tool_calls; null made llama-cpp-python answer 500).
    assert ended["status"] in ("completed", "max_iterations", "incomplete"), (
        ended["error"],
        stderr,
    )
    assert len(of_type(events, "UsageReported")) >= 2


def test_a_request_longer_than_the_context(
    vis_home: Path, workspace: Path, server_url: str
) -> None:
    configure(vis_home, server_url)
    n_ctx = int(os.environ.get("VIS_REAL_SERVER_N_CTX", "8192"))
    request = "Summarize: " + "the quick brown fox jumps over the lazy dog. " * (n_ctx // 4)
    code, events, stderr = vis_run(workspace, request)
    [ended] = of_type(events, "TurnEnded")
    assert code != 0 and ended["status"] == "failed", ended
    error = ended["error"] or ""
    assert "input limit" in error or "context" in error, error
