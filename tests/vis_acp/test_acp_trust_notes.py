"""`vis acp` says a project's trust as `vis run` does: one start note when Vis skipped the
project (never trusted, or changed since), none when it loaded it, in the same words; a
command of a skipped extension or command file names it, as `vis run` does; the extensions
that failed to load are said in `vis run`'s words too, each with what loads them again there."""

from __future__ import annotations

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp_client import EditorClient, rendered, vis_acp
from cli_support import script, vis

from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.trust_notice import skipped_command

HELLO = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="hello", description="Says hello.",
    slash_commands=[vis.SlashCommand("hello", lambda ctx: "hello there", doc="Say hello.")],
))
"""
TRAP = "[see](https:__evil.example)**b**.py"  # a checkout's name: shown as text


@pytest.mark.parametrize("trust", ["trusted", "untrusted", "lapsed"])
async def test_vis_acp_says_the_trust_note_vis_run_says(workspace, vis_home, tmp_path, trust):
    entry = workspace / ".vis" / "extensions" / "hello.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(HELLO, encoding="utf-8")
    if trust != "untrusted":
        TrustStore(VisPaths.from_env({"VIS_HOME": str(vis_home)})).trust(workspace)
    if trust != "trusted":  # skipped, named (loaded, it would fail: it registers nothing)
        (entry.parent / TRAP).write_text("", encoding="utf-8")
    if trust == "lapsed":
        with entry.open("a", encoding="utf-8") as file:
            file.write("# an edit\n")
    s = script(tmp_path, [])  # /hello asks no model
    ran = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "/hello",
        cwd=workspace,
        env_home=vis_home,
    )
    printed = [
        line.removeprefix("vis: ")
        for line in ran.stderr.splitlines()
        if line.startswith("vis: ") and "trust" in line
    ]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, s) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/hello")])
    _, thoughts = rendered(client.text("agent_thought_chunk"))
    notes = [line.removeprefix("Vis: ") for line in thoughts.splitlines() if "trust" in line]
    assert notes == printed and len(notes) == (trust != "trusted"), (notes, printed)
    tags, answer = rendered(client.text("agent_message_chunk"))
    if trust == "trusted":
        assert "hello there" in answer and "hello there" in ran.stdout
        return
    said = skipped_command("hello", workspace, [TRAP, "hello.py"], lapsed=trust == "lapsed")
    assert (
        tags <= {"p", "br"} and answer.startswith("/hello is not a command; ") and said in answer
    ), answer
    assert said in ran.stderr.splitlines()[-1], ran.stderr


async def test_vis_acp_says_which_extensions_failed_to_load(workspace, vis_home, tmp_path):
    folder = workspace / ".vis" / "extensions"
    folder.mkdir(parents=True)
    (folder / "broken.py").write_text("def oops(:\n", encoding="utf-8")  # a syntax error
    (folder / "raises.py").write_text("raise RuntimeError('no luck')\n", encoding="utf-8")
    TrustStore(VisPaths.from_env({"VIS_HOME": str(vis_home)})).trust(workspace)
    s = script(tmp_path, [])
    ran = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(s),
        "/help",
        cwd=workspace,
        env_home=vis_home,
    )
    start = ran.stderr.index("vis: 2 extensions failed to load")
    printed, end = ran.stderr[start:].removeprefix("vis: ").split("\nRun `vis doctor`")
    assert "- broken: " in printed and "- raises: " in printed, ran.stderr
    # what loads them again there: neither has the app's Settings screen or a /reload
    assert end.startswith(" for every extension's status; fix the files, then run `vis run` again.")
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, s) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/help")])  # the notes came before
    _, thoughts = rendered(client.text("agent_thought_chunk"))
    assert printed in thoughts, (printed, thoughts)
    said = thoughts[thoughts.index(printed) :].split("\n")[3]
    assert said == (
        "Run `vis doctor` for every extension's status; fix the files, then restart the Vis "
        "agent in the editor."
    ), thoughts


async def test_vis_acp_names_a_skipped_command_file(workspace, vis_home, tmp_path):
    command = workspace / ".vis" / "commands" / "review.md"
    command.parent.mkdir(parents=True)
    command.write_text("Review the change.\n", encoding="utf-8")
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, [])) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/review")])
    _, answer = rendered(client.text("agent_message_chunk"))
    said = skipped_command("review", workspace, [], lapsed=False, files=[".vis/commands/review.md"])
    assert answer.startswith("/review is not a command; ") and said in answer, answer
