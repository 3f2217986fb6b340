"""`vis acp` without a model: "authentication required" with the method Vis advertises and
a message that says what to do in an editor; a stored session still loads."""

from __future__ import annotations

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp_client import EditorClient, vis_acp
from cli_support import script

from vis_core.acp.auth import METHOD_ID
from vis_core.paths import VisPaths
from vis_core.store import Store

SCRIPTED = 'model = "scripted/script"\n'  # the model config.toml names once it is set up


def _turns(session_id: str) -> list[str]:
    store = Store(VisPaths.from_env().db_file)
    try:
        return [t.request for t in store.turns(session_id)]
    finally:
        store.close()


async def test_no_model_asks_the_editor_to_authenticate_and_a_set_up_model_then_works(
    workspace, vis_home, tmp_path
):
    """session/new answered a bare "Internal error" whose data told the person to export a
    variable in a shell; initialize offered no authentication method."""
    steps = script(tmp_path, [{"text": "set up"}])
    async with vis_acp(EditorClient(), workspace, vis_home, None, "--script", str(steps)) as (
        conn,
        _,
    ):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        ((method),) = [m.model_dump() for m in init.auth_methods or []]
        assert method["id"] == METHOD_ID and "agent_servers" in method["description"]
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
        said = str(refused.value)
        assert refused.value.code == -32000, said
        assert said.startswith("No model is configured. Give Vis a model:")
        assert "`env` of Vis's entry" in said and "/login" in said and "export" not in said
        with pytest.raises(RequestError) as unknown:
            await conn.authenticate(method_id="password")
        assert unknown.value.code == -32602
        (vis_home / "config.toml").write_text(SCRIPTED)  # as /login in a terminal saves it
        await conn.authenticate(method_id=METHOD_ID)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        ended = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
    assert ended.stop_reason == "end_turn" and _turns(sid) == ["hello"]


async def test_a_model_without_its_key_says_which_key_in_the_editors_terms(
    workspace, vis_home, tmp_path
):
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, None, "--model", "anthropic/claude-x") as (
        conn,
        _,
    ):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
    said = str(refused.value)
    assert refused.value.code == -32000, said
    assert said.startswith("no API key for provider 'anthropic': ANTHROPIC_API_KEY is not set")
    assert "Give Vis a model:" in said


async def test_a_stored_session_loads_without_a_model_and_its_prompt_asks_for_one(
    workspace, vis_home, tmp_path
):
    """Loading a stored session failed with "Internal error" when no model was set up; its
    history is the editor's to see, and a prompt asks for a model, then goes to it."""
    first = EditorClient()
    async with vis_acp(first, workspace, vis_home, script(tmp_path, [{"text": "one"}])) as (
        conn,
        _,
    ):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first")])
    steps = script(tmp_path, [{"text": "two"}])
    second = EditorClient()
    async with vis_acp(second, workspace, vis_home, None, "--script", str(steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert second.text("user_message_chunk") == "first"
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id=sid, prompt=[text_block("second")])
        assert refused.value.code == -32000 and _turns(sid) == ["first"]
        (vis_home / "config.toml").write_text(SCRIPTED)
        ended = await conn.prompt(session_id=sid, prompt=[text_block("second")])
    assert ended.stop_reason == "end_turn" and _turns(sid) == ["first", "second"]
    assert second.text("agent_message_chunk").endswith("two")
