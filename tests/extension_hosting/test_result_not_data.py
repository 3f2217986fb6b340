"""A tool result the sandbox cannot take names the extension's own type, not Vis's internals,
and where it sits in the result."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

SHADES = '''
from dataclasses import dataclass

import vis_core.extension as vis


class Shade:
    """No data: its slots are no public attributes to cross as a record's fields."""

    __slots__ = ("tone",)


DARK = Shade()


@dataclass(frozen=True)
class Paint:
    name: str
    shade: Shade


def shade() -> Shade:
    """The Shade itself."""
    return DARK


def paint() -> Paint:
    """A paint whose shade is not data."""
    return Paint("ink", DARK)


vis.register_extension(vis.Extension(
    name="shades", alias="shades", description="A result with a field that is not data.",
    symbols=[vis.Symbol(paint), vis.Symbol(shade)],
))
'''

CODE = """
for tool in (shades.paint, shades.shade):
    try:
        await tool()
    except Exception as exc:
        print(exc)
"""


async def test_a_result_with_a_value_that_is_not_data_names_its_type(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "shades", SHADES)
    write_script(script_path, code_turn(CODE))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        paint, shade = block.stdout.splitlines()
        assert "cannot be returned to Python: result.shade is a Shade, which cannot" in paint
        assert "cannot be returned to Python: result is a Shade, which cannot" in shade
        for text in (paint, shade):
            assert "cannot cross the sandbox boundary" in text, text
            assert "RemoteObject" not in text and "vis_core.ipc" not in text, text
    finally:
        await host.close()
