"""Values of an extension's own subclasses of plain types (a str-Enum, an IntEnum, a str or list
subclass, a NamedTuple) that the extension hands to the host (``vis.state``, ``vis.log``,
``vis.tools`` arguments) cross as their plain type: the host never loads the extension's
module, so they must not be pickled by their class. A plain Enum member crosses as its value,
as the sandbox wire sends it."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

MODES = '''
import enum
from typing import NamedTuple

import vis_core.extension as vis


class Mode(str, enum.Enum):
    FAST = "fast"


class Level(enum.IntEnum):
    HIGH = 3


class Shade(enum.Enum):
    DARK = "dark"


class Name(str):
    pass


class Names(list):
    pass


class Pair(NamedTuple):
    a: int
    b: str


def save() -> list:
    """Keeps values of its own subclasses in vis.state and logs a str subclass."""
    vis.state["mode"] = Mode.FAST
    vis.state["all"] = {"level": Level.HIGH, "names": Names([Name("x")]), "pair": Pair(1, "y")}
    vis.log("info", Name("a str subclass logged"))
    return [vis.state["mode"], vis.state["all"]]


def relay(kind: str):
    """Hands a value of its own class to another extension's tool through vis.tools."""
    value = {"mode": Mode.FAST, "name": Name("n"), "shade": Shade.DARK}[kind]
    return vis.tools.echoes.echo(value)


vis.register_extension(vis.Extension(
    name="modes", alias="modes", description="Values of its own subclasses.",
    symbols=[vis.Symbol(save), vis.Symbol(relay)],
))
'''

ECHOES = '''
import vis_core.extension as vis


def echo(value):
    """Gives its argument back."""
    return value


vis.register_extension(vis.Extension(
    name="echoes", alias="echoes", description="Echo.", symbols=[vis.Symbol(echo)],
))
'''

CODE = """
import json
print(json.dumps(await modes.save()))
for kind in ("mode", "name", "shade"):
    try:
        value = await modes.relay(kind)
        print(type(value).__name__, value)
    except Exception as exc:
        print(type(exc).__name__, exc)
"""


async def test_own_subclasses_of_plain_types_cross_as_those_types(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "modes", MODES)
    install_extension(vis_home, "echoes", ECHOES)
    write_script(script_path, code_turn(CODE))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        saved, mode, name, shade = block.stdout.strip().splitlines()
        assert saved == ('["fast", {"level": 3, "names": ["x"], "pair": [1, "y"]}]'), saved
        assert mode == "str fast", mode
        assert name == "str n", name
        assert shade == "str dark", shade
        assert "ModuleNotFoundError" not in block.stdout, block.stdout
    finally:
        await host.close()
