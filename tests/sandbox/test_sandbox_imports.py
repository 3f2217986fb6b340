"""What the sandbox child has imported when it runs its first block: what every block needs,
not what only some blocks or the host need. Each module here was once imported by every child
start (one per session, and one after each restart of a runaway block)."""

from __future__ import annotations

from vis_core.sandbox import Sandbox, ToolEntry

from .conftest import HostTools, MakeSandbox

# The host's view of blocks and Activities, the terminal's escaping, the SDK's declarations
# (lent on first use), the store and the settings: none of them runs in a child. Nor what only
# some blocks need: pickle (a variable to save or restore), the tools' signatures made from
# their contracts (a block that asks for one), the host's queue of child starts.
NOT_AT_START = (
    "vis_core.model.block",
    "vis_core.model.activity",
    "vis_core.terminal",
    "vis_core.extension.declarations",
    "vis_core.store",
    "vis_core.settings",
    "sqlite3",
    "pickle",
    "vis_core.contracts.introspect",
    "queue",
)


async def test_the_first_block_runs_in_a_child_that_imported_only_what_blocks_need(
    sandbox: Sandbox,
) -> None:
    result = await sandbox.run(
        f"import sys\nprint(*(m for m in {NOT_AT_START!r} if m in sys.modules))\n"
    )
    assert result.error is None
    assert result.stdout.split() == []


async def test_what_the_child_loads_on_first_use_is_there_when_a_block_needs_it(
    make_sandbox: MakeSandbox, host_tools: HostTools
) -> None:
    """A tool's signature, made from its contract when a block first asks (``doc``'s too, which
    the sandbox answers in part itself), and a variable, pickled when the block that made it
    ends and unpickled by the next child."""
    contract = {"name": "doc", "signature": "(name: str) -> str"}
    host_tools.entries.append(ToolEntry("doc", "Document a name.", contract))
    sandbox = make_sandbox()
    result = await sandbox.run(
        "import inspect, typing\n"
        "print(inspect.signature(git.status))\n"
        "print(typing.get_type_hints(git.status))\n"
        "print(inspect.signature(doc), type(doc).__name__)\n"
        "kept = {'a': (1, 2)}\n"
    )
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "(path: str = '.', *, short=False)",
        "{'path': <class 'str'>}",
        "(name: str) -> str SessionDoc",
    ]
    await sandbox.run("import os\nos._exit(1)")
    again = await sandbox.run("print(kept)")
    assert again.restarted is not None and "variables kept" in again.restarted
    assert again.stdout == "{'a': (1, 2)}\n", again.error


async def test_the_child_serves_with_the_collector_on_and_its_start_set_aside(
    sandbox: Sandbox,
) -> None:
    """The collector is off while the child imports, then on (``collector_on``), with what the
    imports made frozen out of its passes."""
    result = await sandbox.run("import gc\nprint(gc.isenabled(), gc.get_freeze_count() > 0)\n")
    assert result.error is None
    assert result.stdout.split() == ["True", "True"]
