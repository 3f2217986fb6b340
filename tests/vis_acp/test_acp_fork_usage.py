"""`vis acp`: a session forked from the editor, and the context in use as usage updates."""

from __future__ import annotations

from acp import PROTOCOL_VERSION, text_block
from acp_client import EditorClient, vis_acp
from cli_support import script

from vis_core.events import TurnStarted
from vis_core.paths import VisPaths
from vis_core.store import Store


async def test_a_forked_session_continues_the_conversation_and_usage_is_reported(
    workspace, vis_home, tmp_path
):
    (vis_home / "config.toml").write_text('[models."scripted/script"]\ninput_limit = 90000\n')
    steps = [{"text": "first"}, {"text": "in the fork"}, {"text": "empty fork"}]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.session_capabilities.fork is not None
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("start here")])
        usage = client.of("usage_update")[-1]
        assert usage.size == 90000 and 0 < usage.used < 90000
        assert usage.cost is not None and usage.cost.currency == "USD"
        fork = await conn.fork_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert fork.session_id != sid and fork.modes.current_mode_id == "default"
        ended = await conn.prompt(session_id=fork.session_id, prompt=[text_block("go on")])
        assert ended.stop_reason == "end_turn"
        forked_usage = [u for s, u in client.updates if s == fork.session_id]
        assert any(u.session_update == "usage_update" for u in forked_usage)
        # a session with nothing settled forks into a fresh one
        empty = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        fresh = await conn.fork_session(cwd=str(workspace), session_id=empty, mcp_servers=[])
        assert fresh.session_id not in (empty, sid, fork.session_id)

    store = Store(VisPaths.from_env().db_file)
    try:
        row = store.get_session(fork.session_id)
        requests = [e.event.request for e in store.events(fork.session_id, types={"TurnStarted"})]
        source = [e.event for e in store.events(sid) if isinstance(e.event, TurnStarted)]
    finally:
        store.close()
    assert row is not None and row.forked_from == sid
    assert requests == ["start here", "go on"] and len(source) == 1
