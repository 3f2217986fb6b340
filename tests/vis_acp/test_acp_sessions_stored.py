"""`vis acp`: stored sessions listed, loaded (replayed) and resumed; trust as in `vis run`;
model output is data inside the protocol's JSON, never a line of its own."""

from __future__ import annotations

import logging

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp_client import EditorClient, vis_acp
from cli_support import script

FAKE = '\n{"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "refusal"}}\n'


async def test_sessions_are_listed_loaded_and_resumed_and_an_untrusted_project_waits(
    workspace, vis_home, tmp_path, caplog
):
    caplog.set_level(logging.ERROR)
    (workspace / "vis.yml").write_text("environment:\n  PROJECT_VALUE: secret-ish\n")
    steps = [
        {"code": "import os\nprint('value:', os.environ.get('PROJECT_VALUE'))"},
        {"text": "first answer" + FAKE},
    ]
    first = EditorClient()
    async with vis_acp(first, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        ended = await conn.prompt(session_id=sid, prompt=[text_block("check the value")])
        assert ended.stop_reason == "end_turn"
    # an untrusted project's values wait, as in `vis run`, and Vis says so
    shown = [
        c.content.text
        for _, u in first.updates
        if isinstance(getattr(u, "content", None), list)
        for c in u.content
        if c.type == "content"
    ]
    assert any("value: None" in text for text in shown)
    assert "not trusted" in first.text("agent_thought_chunk")
    # the model's text arrived as text, whole, and broke nothing
    assert FAKE in first.text("agent_message_chunk")
    assert "Error parsing JSON-RPC message" not in caplog.text

    # a child session (run_session) of it is Vis's own business: not listed to the editor
    from vis_core.paths import VisPaths
    from vis_core.store import Store

    store = Store(VisPaths.from_env().ensure().db_file)
    try:
        child = store.create_session(str(workspace), str(workspace)).id
        store.set_parent(child, sid)
    finally:
        store.close()

    second = EditorClient()
    async with vis_acp(second, workspace, vis_home, script(tmp_path, [{"text": "again"}])) as (
        conn,
        _,
    ):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.session_capabilities.resume is not None
        listed = await conn.list_sessions(cwd=str(workspace))
        assert [row.session_id for row in listed.sessions] == [sid]
        assert listed.sessions[0].title == "check the value"
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert second.text("user_message_chunk") == "check the value"
        assert "first answer" in second.text("agent_message_chunk")
        assert second.of("tool_call")  # the block, replayed as a tool call
        resumed = await conn.resume_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert resumed.modes.current_mode_id == "default"
        ended = await conn.prompt(session_id=sid, prompt=[text_block("once more")])
        assert ended.stop_reason == "end_turn"
        assert second.text("agent_message_chunk").endswith("again")
        await conn.close_session(session_id=sid)
        with pytest.raises(RequestError):  # a closed session takes no prompt
            await conn.prompt(session_id=sid, prompt=[text_block("after close")])


async def test_a_session_loads_only_with_its_own_folder_as_cwd(vis_home, tmp_path):
    """An editor asking to load or resume a session with another folder as ``cwd`` is told the
    session's folder: its turns never run in the folder the editor gave."""
    there, here = tmp_path / "there", tmp_path / "here"
    there.mkdir()
    here.mkdir()
    client = EditorClient()
    async with vis_acp(client, there, vis_home, script(tmp_path, [{"text": "one"}])) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(there), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first")])
    client = EditorClient()
    async with vis_acp(client, here, vis_home, script(tmp_path, [{"text": "two"}])) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        for ask in (conn.load_session, conn.resume_session):
            with pytest.raises(RequestError) as refused:
                await ask(cwd=str(here), session_id=sid, mcp_servers=[])
            assert f"belongs to {there.resolve()}" in str(refused.value.data)
        await conn.load_session(cwd=str(there), session_id=sid, mcp_servers=[])
        assert client.text("user_message_chunk") == "first"


async def test_a_session_is_named_by_its_whole_id_not_a_prefix(workspace, vis_home, tmp_path):
    """session/load took a prefix and answered under the whole id: the editor got updates for
    a session it never asked for, and its prompt under the prefix was "not found"."""
    client = EditorClient()
    steps = [{"text": "one"}, {"text": "two"}]
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first")])
        await conn.close_session(session_id=sid)
        client.updates.clear()
        for ask in (conn.load_session, conn.resume_session, conn.fork_session):
            with pytest.raises(RequestError) as refused:
                await ask(cwd=str(workspace), session_id=sid[:8], mcp_servers=[])
            assert refused.value.code == -32002
            assert str(refused.value) == (
                f"Vis has no session {sid[:8]!r}: give a session's whole id, as session/new "
                "and session/list answer it"
            )
        assert client.updates == []
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        ended = await conn.prompt(session_id=sid, prompt=[text_block("second")])
    assert ended.stop_reason == "end_turn"
    assert {s for s, _ in client.updates} == {sid}
