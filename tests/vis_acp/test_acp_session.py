"""`vis acp` end to end: a client on the package's client side drives a real `vis acp`."""

from __future__ import annotations

import base64
import logging

from acp import PROTOCOL_VERSION, image_block, resource_link_block, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities
from acp_client import EditorClient, vis_acp
from cli_support import script
from processes import fresh_python

from vis_core.events import ImageAttached, UserContext
from vis_core.paths import VisPaths
from vis_core.store import Store

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))

WORK = [
    {
        "thinking": "Let me look at the notes first.",
        "text": "Reading the notes.",
        "code": (
            "print(await cat('notes.txt'))\n"
            "await todo.add('Write tests')\n"
            "await todo.add('Ship')\n"
            "await todo.done(1)"
        ),
    },
    {"code": "print(await patch('notes.txt', 1, [{'start': 1, 'end': 1, 'text': 'edited\\n'}]))"},
    {"code": "h = await shell('echo hi-from-shell')\nprint(await h.wait(30))"},
    {"text": "All done."},
]


async def test_a_session_streams_answers_tool_calls_plans_and_edits_through_the_editor(
    workspace, vis_home, tmp_path, caplog
):
    caplog.set_level(logging.ERROR)
    notes = workspace / "notes.txt"
    notes.write_text("disk text\n")
    client = EditorClient(buffers={str(notes): "unsaved buffer text\n"})
    s = script(tmp_path, WORK)
    async with vis_acp(client, workspace, vis_home, s) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        caps = init.agent_capabilities
        assert caps.load_session and caps.prompt_capabilities.image
        assert caps.session_capabilities.list is not None
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = new.session_id
        assert [m.id for m in new.modes.available_modes] == ["default", "plan"]
        assert new.config_options[0].id == "model"
        ended = await conn.prompt(session_id=sid, prompt=[text_block("tidy the notes")])
        assert ended.stop_reason == "end_turn"

    assert "Let me look at the notes first." in client.text("agent_thought_chunk")
    thinking = [u.content.text for u in client.of("agent_thought_chunk")]
    assert sum(1 for t in thinking if t in "Let me look at the notes first.") > 1  # streamed
    answer = client.text("agent_message_chunk")
    assert "Reading the notes." in answer and "All done." in answer
    # each Activity is a tool call with kind, status, title and locations
    starts = {u.tool_call_id: u for u in client.of("tool_call")}
    finals: dict[str, object] = {}
    for u in client.of("tool_call_update"):
        finals[u.tool_call_id] = u
    read = next(u for u in starts.values() if u.title.startswith("Read file"))
    assert read.kind == "read" and read.locations[0].path == str(notes)
    edit = next(
        u for u in [*starts.values(), *finals.values()] if (u.title or "").startswith("Edit file")
    )
    assert edit.kind in ("edit", None)
    diffs = [
        c
        for u in [*starts.values(), *finals.values()]
        for c in (u.content or [])
        if c.type == "diff"
    ]
    assert any(d.path == str(notes) and "edited" in d.new_text for d in diffs)
    terminal = next(u for u in starts.values() if u.title.startswith("Run command"))
    assert terminal.kind == "execute"
    shown = [
        c.content.text
        for u in client.updates
        if hasattr(u[1], "content") and isinstance(u[1].content, list)
        for c in u[1].content
        if c.type == "content"
    ]
    assert any("hi-from-shell" in text for text in shown)
    statuses = {getattr(finals.get(i), "status", None) or starts[i].status for i in starts}
    assert statuses <= {"completed", "failed"} and "completed" in statuses
    python = [u for u in starts.values() if u.title.startswith("python:")]
    assert python and all(u.kind == "execute" for u in python)
    # the read went through the editor: the model saw the unsaved buffer, not the disk
    assert str(notes) in client.reads
    assert any("unsaved buffer text" in text for text in shown)
    # the write went through the editor too, from the buffer's text
    assert client.writes == {str(notes): "edited\n"}
    # the todo list is the plan
    plan = client.of("plan")[-1]
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Write tests", "completed"),
        ("Ship", "in_progress"),
    ]
    commands = client.of("available_commands_update")[0].available_commands
    names = {c.name for c in commands}
    assert {"plan", "todo", "model", "mcp"} <= names and "quit" not in names
    # stdout carried only the protocol
    assert "Error parsing JSON-RPC message" not in caplog.text


async def test_prompts_take_images_and_links_and_answer_forms_modes_models_and_cancel(
    workspace, vis_home, tmp_path
):
    (workspace / "guide.md").write_text("# Guide\nuse tabs\n")
    steps = [
        {"text": "Seen."},
        {
            "code": (
                "await draft_create()\n"
                "open('made.txt', 'w').write('x\\n')\n"
                "print(await draft_approve())"
            )
        },
        {"text": "Approved."},
        {"text": "a slow answer that is cancelled", "chunk": 2, "delay_ms": 200},
    ]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        link = resource_link_block("guide.md", (workspace / "guide.md").as_uri())
        picture = image_block(base64.b64encode(PNG).decode(), "image/png")
        ended = await conn.prompt(session_id=sid, prompt=[text_block("look at"), link, picture])
        assert ended.stop_reason == "end_turn"
        # the draft approval form is a permission request the client answers
        ended = await conn.prompt(session_id=sid, prompt=[text_block("make it in a draft")])
        assert ended.stop_reason == "end_turn"
        assert client.permissions and "Approve draft" in client.permissions[0][0].title
        assert (workspace / "made.txt").read_text() == "x\n"
        # plan mode from the client, left with the /plan command
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        ended = await conn.prompt(session_id=sid, prompt=[text_block("/plan off")])
        modes = [u.current_mode_id for u in client.of("current_mode_update")]
        assert modes == ["plan", "default"]
        # cancel mid-answer
        client.cancel_on_chunk = True
        ended = await conn.prompt(session_id=sid, prompt=[text_block("go slowly")])
        assert ended.stop_reason == "cancelled"
        # the model picker
        picked = await conn.set_config_option(
            session_id=sid, config_id="model", value="scripted/other"
        )
        assert picked.config_options[0].current_value == "scripted/other"

    store = Store(VisPaths.from_env().db_file)
    try:
        events = [row.event for row in store.events(sid)]
    finally:
        store.close()
    images = [e for e in events if isinstance(e, ImageAttached)]
    assert images and images[0].media_type == "image/png"
    attached = [e for e in events if isinstance(e, UserContext) and e.title == "guide.md"]
    assert attached and "use tabs" in attached[0].text


# A fresh process: an editor's new session, and no prompt yet.
PREPARED = """
import asyncio, sys
from pathlib import Path
from vis_core.acp.agent import VisAgent
from vis_core.host import HostOptions

class Editor:  # takes every update the agent sends, and answers nothing
    def __getattr__(self, name):
        async def taken(*args, **kwargs):
            return None
        return taken

async def main() -> None:
    agent = VisAgent(HostOptions(workspace=Path(sys.argv[1]), model="openai/gpt-5"))
    agent.on_connect(Editor())
    before = "openai" in sys.modules
    await agent.new_session(cwd=sys.argv[1])
    for _ in range(3000):
        if "openai.types" in sys.modules:
            break
        await asyncio.sleep(0.02)
    print("at start:", before, "prepared:", "openai.types" in sys.modules)
    for core in agent.cores.values():
        await core.close()

asyncio.run(main())
"""


def test_the_models_sdk_is_imported_when_a_session_starts_not_at_its_first_prompt(
    workspace, vis_home
):
    """``openai`` or ``anthropic`` takes 1-3 s of CPU to import, on the loop that serves every
    session of the editor: `vis acp` imports it in a thread of its own as a session starts."""
    done = fresh_python(
        PREPARED, str(workspace), vis_home=vis_home, env={"OPENAI_API_KEY": "sk-test"}
    )
    assert done.stdout.strip() == "at start: False prepared: True", done.stderr[-2000:]


async def test_no_tool_call_location_leads_the_editor_out_of_the_workspace(
    workspace, vis_home, tmp_path
):
    """An editor that follows the agent opens each tool call's locations. A refused read of
    ``/etc/passwd`` (or of a link in the workspace to a file outside it) was sent as a
    location, so the model could make the person's editor open any file on screen; a link the
    block makes is among its files, but not a location."""
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "notes.txt").write_text("notes\n")
    reads = ["/etc/passwd", str(secret), "../secret.txt", "link.txt", "notes.txt"]
    code = (
        "".join(
            f"try:\n    print(await cat({path!r}))\nexcept Exception as exc:\n    print(exc)\n"
            for path in reads
        )
        + f"import os\nos.symlink({str(secret)!r}, 'made.txt')\n"
    )
    client = EditorClient()
    s = script(tmp_path, [{"code": code}, {"text": "Read them."}])
    async with vis_acp(client, workspace, vis_home, s) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("read")])
    calls = [*client.of("tool_call"), *client.of("tool_call_update")]
    located = {loc.path for u in calls for loc in (u.locations or [])}
    assert str(workspace / "notes.txt") in located
    assert located <= {str(workspace / "notes.txt")}, located
    said = [c.content.text for u in calls for c in (u.content or []) if c.type == "content"]
    assert any(text.startswith("created: made.txt (a link to") for text in said), said
