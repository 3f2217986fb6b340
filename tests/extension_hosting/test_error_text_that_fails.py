"""A tool that raises an exception whose ``__str__`` raises still answers its call: the error
names its class and says its text could not be made. Before, the worker failed to write the
answer and the call never returned."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

BROKEN = '''
import vis_core.extension as vis


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def fail() -> None:
    """Raises an exception that cannot say what it is."""
    raise Unprintable()


def fail_hard() -> None:
    """Raises a KeyboardInterrupt subclass that cannot say what it is."""

    class Hard(KeyboardInterrupt):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    raise Hard()


vis.register_extension(vis.Extension(
    name="broken", alias="broken", description="Errors without text.",
    symbols=[vis.Symbol(fail), vis.Symbol(fail_hard)],
))
'''

CODE = """
import asyncio
for tool in (broken.fail, broken.fail_hard):
    try:
        await asyncio.wait_for(tool(), 10)
    except TimeoutError:
        print("no answer")
    except Exception as exc:
        print(exc)
"""


async def test_an_error_whose_text_cannot_be_made_still_answers(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "broken", BROKEN)
    write_script(script_path, code_turn(CODE))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        fail, hard = block.stdout.strip().splitlines()
        assert "Unprintable: (its text could not be made: RuntimeError in __str__)" in fail, fail
        assert "Hard: (its text could not be made: RuntimeError in __str__)" in hard, hard
    finally:
        await host.close()
