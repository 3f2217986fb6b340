"""What the sandbox child has imported when it runs its first block: what every block needs,
not what only some blocks or the host need. Each module here was once imported by every child
start (one per session, and one after each restart of a runaway block)."""

from __future__ import annotations

from vis_core.sandbox import Sandbox

# The host's view of blocks and Activities, the terminal's escaping, the SDK's declarations
# (lent on first use), the store and the settings: none of them runs in a child.
NOT_AT_START = (
    "vis_core.model.block",
    "vis_core.model.activity",
    "vis_core.terminal",
    "vis_core.extension.declarations",
    "vis_core.store",
    "vis_core.settings",
    "sqlite3",
)


async def test_the_first_block_runs_in_a_child_that_imported_only_what_blocks_need(
    sandbox: Sandbox,
) -> None:
    result = await sandbox.run(
        f"import sys\nprint(*(m for m in {NOT_AT_START!r} if m in sys.modules))\n"
    )
    assert result.error is None
    assert result.stdout.split() == []


async def test_the_child_serves_with_the_collector_on_and_its_start_set_aside(
    sandbox: Sandbox,
) -> None:
    """The collector is off while the child imports, then on (``collector_on``), with what the
    imports made frozen out of its passes."""
    result = await sandbox.run("import gc\nprint(gc.isenabled(), gc.get_freeze_count() > 0)\n")
    assert result.error is None
    assert result.stdout.split() == ["True", "True"]
