"""What the model sees: an inactive extension has no tools, a hidden one stays unlisted."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

SLEEPY = '''
import vis_core.extension as vis


def nap() -> str:
    """Take a nap."""
    return "zz"


vis.register_extension(vis.Extension(
    name="sleepy", alias="sleepy", description="Naps on demand.", prompt="Call nap() to rest.",
    activation=lambda env: False,
    symbols=[vis.Symbol(nap, activity=vis.Activity(label="Nap"))],
))
'''

SHOP = '''
import vis_core.extension as vis


class Shop:
    @vis.method(activity=vis.Activity(label="List items"))
    def items(self) -> list[str]:
        """The items on sale."""
        return ["tea"]

    @vis.method(is_hidden=True, activity=vis.Activity(label="Restock"))
    def restock(self) -> str:
        """Refill the shelves (for maintenance only)."""
        return "restocked"


vis.register_extension(vis.Extension(
    name="shop", alias="shop", description="A shop.",
    symbols=[vis.Symbol(Shop(), name="shop")],
))
'''


async def test_an_inactive_extension_has_no_tools_that_turn(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "sleepy", SLEEPY)
    block = """
import json
try:
    await nap()
    called = "yes"
except NameError as exc:
    called = str(exc)
print(json.dumps({
    "called": called, "apropos": [h.name for h in await apropos("nap")],
    "alias": "sleepy" in globals(),
}))
"""
    write_script(script_path, code_turn(block, "print(await doc('nap'))"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        prompt = await host.registry.sessions[0].system_prompt()
    finally:
        await host.close()
    out = outcome.printed(0)
    assert "nap" in out["called"] and out["apropos"] == [] and out["alias"] is False
    assert "no public tool, guide or skill is named 'nap'" in (outcome.blocks[1].error or "")
    assert "nap" not in prompt and "sleepy" not in prompt


async def test_a_hidden_method_is_callable_but_not_listed_by_its_namespace(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "shop", SHOP)
    block = """
import json
print(json.dumps({
    "repr": repr(shop), "dir": dir(shop), "restock": await shop.restock(),
    "apropos": [h.name for h in await apropos("^shop")],
}))
"""
    write_script(script_path, code_turn(block))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    out = outcome.printed(0)
    assert out["restock"] == "restocked"
    assert out["dir"] == ["items"] and "restock" not in out["repr"] and "items" in out["repr"]
    assert out["apropos"] == ["shop.items"]
