"""`vis acp`: the MCP servers an editor passes join the session (stdio, http, sse); a bad one
fails alone and is named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)
from acp_client import EditorClient, rendered, vis_acp
from cli_support import script
from warm_servers import command
from web_server import web_server

SERVER = Path(__file__).with_name("editor_mcp_server.py")
HEADER = [HttpHeader(name="X-Editor-Token", value="let-me-in")]


@pytest.fixture
def web_servers() -> Iterator[tuple[str, str]]:
    """The http and the sse test server: one process serves both."""
    with web_server(SERVER, "web") as base:
        yield base, base


CALLS = (
    "print(await mcp__local__token(), await mcp__local__keys())\n"
    "print('http', await mcp__web__token())\n"
    "print('sse', await mcp__Old_Stream__token())"
)


async def test_editor_servers_join_the_session_and_a_bad_one_fails_alone(
    workspace, vis_home, tmp_path, web_servers, monkeypatch
):
    http, sse = web_servers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-vis-own-secret-0123456789")  # Vis's, not theirs
    program, *args = command(SERVER, "stdio")
    servers = [
        McpServerStdio(
            name="local",
            command=program,
            args=args,
            env=[
                EnvVariable(name="EDITOR_TOKEN", value="editor-secret-value-42"),
                EnvVariable(name="EDITOR_NOTE", value="${OPENAI_API_KEY}"),
            ],
        ),
        HttpMcpServer(type="http", name="web", url=f"{http}/mcp", headers=HEADER),
        SseMcpServer(type="sse", name="Old Stream", url=f"{sse}/sse", headers=HEADER),
        McpServerStdio(name="broken", command="/nonexistent/server", args=[], env=[]),
        AcpMcpServer(type="acp", name="inner", server_id="s1"),
    ]
    steps = [{"code": CALLS}, {"text": "Called."}]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        mcp = init.agent_capabilities.mcp_capabilities
        assert mcp.http and mcp.sse
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=servers)).session_id
        said = await client.wait_for_text("agent_thought_chunk", "the editor's MCP servers")
        ended = await conn.prompt(session_id=sid, prompt=[text_block("call them")])
        assert ended.stop_reason == "end_turn"

    tags, notes = rendered(said)  # as the editor shows it: one server a list item
    notes = notes.split("the editor's MCP servers", 1)[1]
    assert "\nlocal: connected · mcp__local__keys, mcp__local__token\n" in notes
    assert "\nweb: connected" in notes and "\nOld_Stream: connected" in notes
    assert "\nbroken: failed: cannot start '/nonexistent/server'" in notes
    assert "\ninner: skipped: Vis cannot reach 'acp' MCP servers" in notes
    assert tags <= {"p", "br", "ul", "li"}
    shown = "".join(
        c.content.text
        for _, u in client.updates
        if isinstance(getattr(u, "content", None), list)
        for c in u.content
        if c.type == "content"
    )
    # the editor's values as given (never expanded; a key's redacted), none of Vis's own keys
    assert "token=[REDACTED] note=${OPENAI_API_KEY} keys=-" in shown
    assert "http token=- note=-" in shown and "sse token=-" in shown  # the header got them in
    assert "sk-vis-own-secret" not in shown and "editor-secret-value-42" not in shown
