"""A plain Enum of an extension crosses the sandbox boundary as its value, and an argument
for a parameter that names the Enum reaches the tool as the member."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

TICKETS = '''
from dataclasses import dataclass
from enum import Enum

import vis_core.extension as vis


class Priority(Enum):
    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True)
class Ticket:
    title: str
    priority: Priority = Priority.LOW


def top() -> Priority:
    """The top priority."""
    return Priority.HIGH


def ticket() -> Ticket:
    """A ticket of top priority."""
    return Ticket("crash", Priority.HIGH)


def describe(priority: Priority, ticket: Ticket | None = None) -> str:
    """The types received."""
    held = "" if ticket is None else f" {ticket.priority!r}"
    return f"{priority!r}{held}"


vis.register_extension(vis.Extension(
    name="tickets", alias="tickets", description="Tickets.",
    symbols=[vis.Symbol(top), vis.Symbol(ticket), vis.Symbol(describe)],
))
'''

CODE = """
print(await top())
made = await ticket()
print(made.priority)
print(await describe("high", made))
"""


async def test_an_enum_result_and_argument_cross_as_its_value(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    """Returning ``Priority.HIGH`` (or a dataclass holding it) failed: "a
    vis_ext_user_tickets.Priority value cannot cross the sandbox boundary"; "high" reached
    a ``priority: Priority`` parameter as a str."""
    install_extension(vis_home, "tickets", TICKETS)
    write_script(script_path, code_turn(CODE))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        assert block.stdout.splitlines() == [
            "high",
            "high",
            "<Priority.HIGH: 'high'> <Priority.HIGH: 'high'>",
        ]
    finally:
        await host.close()
