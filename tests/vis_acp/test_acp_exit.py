"""How `vis acp` ends: what it keeps for the next start is saved before it exits."""

from __future__ import annotations

import marshal

from acp import PROTOCOL_VERSION, text_block
from acp_client import EditorClient, vis_acp
from cli_support import script

from vis_core.codegen_cache import cache_file


async def test_a_session_ends_with_the_dataclass_code_saved_for_the_next_start(
    workspace, vis_home, tmp_path
):
    # Without it each start compiled the generated methods of ~1,300 dataclasses again: the
    # server ended with os._exit (the loop's executor threads still alive) and skipped the
    # exit handler that saves them.
    code = cache_file({"VIS_HOME": str(vis_home)})
    code.unlink(missing_ok=True)  # the run's shared copy: none
    s = script(tmp_path, [{"text": "Hello."}])
    client = EditorClient()
    # cold: a warm server's classes were defined by the fork server's imports, not by it
    async with vis_acp(client, workspace, vis_home, s, cold=True) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        ended = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
        assert ended.stop_reason == "end_turn"
    assert process.returncode == 0
    saved = marshal.loads(code.read_bytes())
    assert len(saved[2]) > 100  # the code of the classes this server defined
