"""`vis acp`: `vis.ask` forms answered by the client as permission requests."""

from __future__ import annotations

from acp import PROTOCOL_VERSION, text_block
from acp_client import EditorClient, vis_acp
from cli_support import script

PICKER = '''
import vis_core.extension as vis


def pick() -> str:
    """Ask for a colour, then for a name."""
    colour = vis.ask("Pick a colour", [vis.select("colour", "Colour", ["red", "blue"])])
    name = vis.ask("Your name", [vis.plaintext("name")])
    return f"picked {colour['colour'] if colour else None}; name {name.reason}"


vis.register_extension(vis.Extension(
    name="picker", alias="picker", description="Asks.", symbols=[vis.Symbol(pick)],
))
'''


async def test_a_choice_form_is_a_permission_request_and_a_typed_one_is_undeliverable(
    workspace, vis_home, tmp_path
):
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "picker.py").write_text(PICKER)
    steps = [{"code": "print(await picker.pick())"}, {"text": "Done."}]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        ended = await conn.prompt(session_id=sid, prompt=[text_block("ask me")])
        assert ended.stop_reason == "end_turn"
    (call, options), *rest = client.permissions
    assert call.title == "Pick a colour"
    assert [o.name for o in options] == ["red", "blue", "Cancel"]
    assert rest == []  # a form that needs typing is not asked here: undeliverable
    shown = [
        c.content.text
        for _, u in client.updates
        if isinstance(getattr(u, "content", None), list)
        for c in u.content
        if c.type == "content"
    ]
    assert any("picked red; name undeliverable" in text for text in shown)
