"""`vis acp`: names a checkout or the model chose reach the editor as text, never as Markdown
(a link, emphasis, a heading, a list item or a table that could pass for Vis's own words)."""

from __future__ import annotations

import re
import subprocess

from acp import PROTOCOL_VERSION, text_block
from acp_client import EditorClient, rendered, vis_acp
from cli_support import script

from vis_core.acp.markdown import literal, literal_line

TRAP = "[Vis: review the skipped files here](https:evil.example) **safe**.py"
NAMES = [
    "**Vis checked these files: safe to approve**",
    "[details](https:__evil.example)",
    "# big heading",
    "| a | b |",
    "- 1. item",
]


def test_literal_text_renders_as_itself_line_by_line():
    text = "\n".join(
        [
            TRAP,
            *NAMES,
            "===",
            "12) twelve",
            "  > quoted <b>bold</b> &amp; `code` ~~gone~~ \\",
            "![img](x.png) <https://evil.example>",
            "",
            "after a gap",
            "",
            "    indented like code",
            "\tand tabbed",
            "see https://evil.example/x or WWW.evil.example",
        ]
    )
    escaped = literal(text)
    tags, shown = rendered(escaped)
    assert tags <= {"p", "br"}
    assert [line.strip() for line in shown.splitlines() if line.strip()] == [
        line.strip() for line in text.splitlines() if line.strip()
    ]
    # no bare URL an editor's GFM links on its own (www. or a scheme's ://)
    assert not re.search(r"[^\\]://|www\.", escaped, re.IGNORECASE)
    tags, shown = rendered(literal_line("# a\n[b](c)"))
    assert tags == {"p"} and shown.strip() == "# a [b](c)"


async def test_the_start_notice_names_a_checkouts_files_as_text(workspace, vis_home, tmp_path):
    (workspace / ".vis" / "extensions").mkdir(parents=True)
    (workspace / ".vis" / "extensions" / TRAP).write_text("x = 1\n")
    client = EditorClient()
    steps = [{"text": "Hi."}]
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
    notes = client.text("agent_thought_chunk")
    tags, shown = rendered(notes)
    assert "skipped its extensions" in shown and TRAP in shown
    assert tags <= {"p", "br"}  # no link, no bold: the name as it is on disk


async def test_a_project_changed_since_it_was_trusted_gets_one_true_note(
    workspace, vis_home, tmp_path
):
    """The editor got "… changed since you trusted it …" and, beside it, "This project is
    not trusted …": one note now, as the app and `vis run` say it."""
    from vis_core.paths import TrustStore, VisPaths

    entry = workspace / ".vis" / "extensions" / "hello.py"
    entry.parent.mkdir(parents=True)
    entry.write_text("x = 1\n")
    TrustStore(VisPaths.from_env({"VIS_HOME": str(vis_home)})).trust(workspace)
    entry.write_text("x = 2\n")
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, [{"text": "Hi."}])) as (
        conn,
        _,
    ):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
    _, shown = rendered(client.text("agent_thought_chunk"))
    notes = [line for line in shown.splitlines() if "trust" in line]
    assert len(notes) == 1 and "changed since you trusted it" in notes[0], shown


async def test_the_draft_approval_lists_the_models_file_names_as_text(
    workspace, vis_home, tmp_path
):
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "Ada"],
        ["config", "user.email", "ada@example.com"],
    ):
        subprocess.run(["git", *args], cwd=workspace, check=True)
    (workspace / "notes.txt").write_text("one\n")
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "first"], cwd=workspace, check=True)
    made = "".join(f"open({name!r}, 'w').write('x\\n')\n" for name in NAMES)
    steps = [
        {"code": f"await draft_create('md2')\n{made}print(await draft_approve())"},
        {"text": "Asked."},
    ]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("make them")])
    assert client.permissions, "the approval was asked"
    form = next(
        u
        for _, u in client.updates
        if u.session_update == "tool_call" and u.tool_call_id.startswith("form-")
    )
    tags, shown = rendered(form.content[0].content.text)
    assert "Approve draft" in shown and all(name in shown for name in NAMES)
    assert tags <= {"p", "br"}  # no bold line, no link, no heading, no table
    assert "Approve draft" in rendered(form.title)[1]
