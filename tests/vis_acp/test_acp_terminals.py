"""`vis acp` with an editor that offers terminals: the model's commands show in them, while
they still run where Vis runs them (the jail), never in the editor's environment."""

from __future__ import annotations

import sys

from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities
from acp_client import EditorClient, vis_acp
from cli_support import script

COMMAND = "echo hi-from-shell; echo to-stderr >&2; exit 3"


async def _ran_in_an_editor(workspace, vis_home, tmp_path, command: str) -> EditorClient:
    """The editor that offers terminals, after a turn whose block ran ``command``."""
    steps = [
        {"code": f"h = await shell({command!r})\nprint((await h.wait(30)).exit_code)"},
        {"text": "Ran."},
    ]
    client = EditorClient()
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        caps = ClientCapabilities(terminal=True)
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        ended = await conn.prompt(session_id=sid, prompt=[text_block("run it")])
        assert ended.stop_reason == "end_turn"
    return client


async def test_a_command_shows_in_an_editor_terminal_and_runs_in_the_jail(
    workspace, vis_home, tmp_path
):
    client = await _ran_in_an_editor(workspace, vis_home, tmp_path, COMMAND)
    embedded = [
        c.terminal_id
        for _, u in client.updates
        for c in (getattr(u, "content", None) or [])
        if getattr(c, "type", "") == "terminal"
    ]
    assert embedded and set(embedded) == set(client.terminals)
    started, terminal = client.terminals.values()  # shell() started it; wait() saw its end
    assert started["output"].endswith("… still running\n") and started.get("released")
    # the editor ran Vis's viewer, not the model's command
    assert terminal["argv"][:3] == [sys.executable, "-I", "-S"]
    assert not any(COMMAND in arg for arg in terminal["argv"])
    assert "$ echo hi-from-shell" in terminal["output"]
    assert "hi-from-shell\n" in terminal["output"] and "to-stderr" in terminal["output"]
    assert terminal["process"].returncode == 3 and terminal.get("released")
    shown = "".join(
        c.content.text
        for _, u in client.updates
        for c in (getattr(u, "content", None) or [])
        if getattr(c, "type", "") == "content"
    )
    assert "\n3\n" in shown  # the block saw the exit code of the command Vis ran


def test_the_viewer_waits_for_the_exit_code_not_for_the_exit_file(tmp_path):
    """An exit file seen between its creation and its write is empty: the viewer reads on
    and ends with the code once it is there (it ended with 0, the command's code lost)."""
    import os
    import subprocess

    from vis_core.acp.terminals import VIEWER

    out = tmp_path / "0.out"
    out.write_text("$ false\n")
    (tmp_path / "0.out.exit").write_text("")
    viewer = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", VIEWER, str(out), str(os.getpid())],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert viewer.stdout is not None
    assert viewer.stdout.readline() == "$ false\n"
    with out.open("a") as file:
        file.write("after the empty exit file\n")
    assert viewer.stdout.readline() == "after the empty exit file\n"
    (tmp_path / "0.out.exit").write_text("3")
    assert viewer.wait(30) == 3


async def test_what_a_command_prints_cannot_drive_the_editors_terminal(
    workspace, vis_home, tmp_path
):
    """The editor's terminal is a terminal: a command's OSC 52 (set the clipboard), title
    and hyperlink sequences reach it as text, as they reach the app's and vis run's."""
    command = (
        r"printf 'a\033]52;c;ZWNobyBldmls\007b\033]0;owned\007c"
        r"\033]8;;https://evil.example/\033\\link\033]8;;\033\\d\n'"
    )
    client = await _ran_in_an_editor(workspace, vis_home, tmp_path, command)
    outputs = [terminal["output"] for terminal in client.terminals.values()]
    assert outputs and any("a\\x1b]52;c;ZWNobyBldmls" in out for out in outputs), outputs
    assert not any("\x1b" in out or "\x07" in out for out in outputs), outputs
