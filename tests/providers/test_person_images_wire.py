"""The person's ``@shot.png`` on the wire: an Anthropic image block with a base64 source, an
OpenAI-compatible ``image_url`` data URL (through ``vis run``), resent after a resume; a local
model that does not declare image input refuses before any request."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from image_files import png
from warm_servers import vis_command

from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

from .wire_servers import WireServer, anthropic_reply, openai_reply

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")

SHOT = png(4, 3)
SHOT_B64 = base64.b64encode(SHOT).decode("ascii")


def configure(vis_home: Path, server: WireServer, kind: str, images: bool | None) -> None:
    base = server.anthropic_base_url if kind == "anthropic" else server.openai_base_url
    declared = "" if images is None else f"images = {str(images).lower()}\n"
    (vis_home / "config.toml").write_text(
        f'[providers.wire]\nkind = "{kind}"\nbase_url = "{base}"\napi_key_env = "WIRE_KEY"\n'
        f'[models."wire/local-model"]\ninput_limit = 100000\n{declared}',
        encoding="utf-8",
    )


async def turn(workspace: Path, request: str, mentions: list[str], session_id: str = "") -> Any:
    host = await Host.open(HostOptions(workspace=workspace, provider="wire", model="local-model"))
    try:
        session = await (host.open_session(session_id) if session_id else host.new_session())
        return await session.submit(request, mentions=mentions)
    finally:
        await host.close()


async def test_anthropic_gets_an_image_block_and_again_after_a_resume(
    vis_home: Path, workspace: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIRE_KEY", "k")
    configure(vis_home, wire_server, "anthropic", images=True)
    (workspace / "shot.png").write_bytes(SHOT)
    wire_server.reply(anthropic_reply("A small black image."), anthropic_reply("Still black."))
    ended = await turn(workspace, "describe @shot.png", ["shot.png"])
    assert ended.status is TurnStatus.COMPLETED, ended.error
    (workspace / "shot.png").unlink()  # resent from the session's store, not the workspace
    again = await turn(workspace, "and the corners?", [], ended.session_id)
    assert again.status is TurnStatus.COMPLETED, again.error

    block = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": SHOT_B64},
    }
    for body in wire_server.bodies:
        first = body["messages"][0]
        assert first["role"] == "user"
        text, image = first["content"]
        assert text["type"] == "text" and text["text"].startswith("describe @shot.png")
        assert "shot.png · PNG · " in text["text"] and "4×3" in text["text"]
        image.pop("cache_control", None)  # the cache breakpoint of the newest message
        assert image == block
    assert len(wire_server.bodies) == 2


def vis_run(home: Path, workspace: Path, request: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(VIS_HOME=str(home), WIRE_KEY="k")
    return subprocess.run(
        [*vis_command(env=env), "run", "--model", "wire/local-model", request],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_vis_run_sends_an_at_image_as_an_openai_data_url(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    (workspace / "shot.png").write_bytes(SHOT)
    configure(vis_home, wire_server, "openai", images=None)  # a local model: no images
    refused = vis_run(vis_home, workspace, "describe @shot.png")
    assert refused.returncode == 2
    assert "wire/local-model takes no image input" in refused.stderr
    assert wire_server.requests == []

    configure(vis_home, wire_server, "openai", images=True)
    wire_server.reply(openai_reply("A small black image."))
    done = vis_run(vis_home, workspace, "describe @shot.png.")
    assert done.returncode == 0, done.stderr
    assert "A small black image." in done.stdout
    assert "attached shot.png · PNG · " in done.stderr
    (request,) = wire_server.requests
    user = request.body["messages"][1]
    assert user["role"] == "user"
    text, image = user["content"]
    assert text["type"] == "text" and text["text"].startswith("describe @shot.png.")
    assert image == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{SHOT_B64}"}}
