"""The complete example of docs/extensions.md, installed as a user extension and driven for
real: the model's block calls its tool, its slash command runs, its op hook refuses a shell
command and its state outlives the session. The guide cannot drift from what Vis does."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

GUIDE = Path(__file__).parents[2] / "docs" / "extensions.md"
TOKEN = "tk-5f2c9a77d1e04b"
BLOCKS = [
    {
        "code": (
            'ticket = await open_ticket("Fix the login page")\n'
            "print(ticket.number, ticket.title, ticket.url, ticket.has_token)\n"
            'print(type(await tickets.open_ticket("Rename the config key")).__name__)\n'
        )
    },
    {"code": 'await shell("gh issue create --title login")'},
    {"text": "Noted."},
]


def example() -> str:
    """The guide's one complete entry file: the only Python block that registers."""
    blocks = re.findall(r"^```python\n(.*?)^```$", GUIDE.read_text(encoding="utf-8"), re.S | re.M)
    (source,) = [block for block in blocks if "vis.register_extension(" in block]
    return source


async def _host(workspace: Path, script: Path) -> Host:
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    assert not host.catalog.loaded.errors, host.catalog.loaded.errors
    return host


async def test_the_guides_example_works_as_the_guide_says(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "tickets.py").write_text(example(), encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(BLOCKS), encoding="utf-8")

    host = await _host(workspace, script)
    events: list = []
    try:
        await host.settings.set("tickets_tracker_token", TOKEN, "global")
        session = await host.new_session()
        session.subscribe(events.append)
        ended = await session.submit("note the login bug")
        listed = await host.commands.run(session, "/tickets")
    finally:
        await host.close()

    assert ended.status is TurnStatus.COMPLETED
    called, refused = [e for e in events if isinstance(e, BlockFinished)]
    assert called.error is None, called.error
    assert called.stdout.splitlines() == [
        "1 Fix the login page https://tracker.example.com/tickets/1 True",  # the secret is set
        "Ticket",  # the dataclass, under its own name
    ]
    assert refused.error is not None
    assert (
        "shell was blocked by extension 'tickets': tickets are opened with open_ticket. "
        "Hint: call open_ticket(title)"
    ) in refused.error
    assert listed.ok and listed.title == "Open tickets: 2"

    # another start of Vis, another session: the tickets are still there
    script.write_text(yaml.safe_dump([{"text": "unused"}]), encoding="utf-8")
    host = await _host(workspace, script)
    try:
        later = await host.commands.run(await host.new_session(), "/tickets")
    finally:
        await host.close()
    assert later.ok and later.title == "Open tickets: 2"
    assert later.body == "- #1 Fix the login page\n- #2 Rename the config key"
