"""A real sandbox child: proxies expose .contract, inspect.signature, annotations and doc()."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from vis_core.extension.symbols import Symbol
from vis_core.extension_host.symbol_tools import symbol_host_tools, tool_contract
from vis_core.sandbox import Sandbox, ToolEntry
from vis_core.tools.discovery import discovery_tools
from vis_core.tools.registry import ToolRegistry

from .examples import Greeter


class Tools:
    def count(self, text: str, /, *, unit: str = "words", limit: int = 200) -> int:
        """Count units of text."""
        return len(text.split()) if unit == "words" else len(text)


@pytest.fixture
async def sandbox(workspace: Path) -> AsyncIterator[Sandbox]:
    box: list[ToolRegistry] = []
    tools = [
        *symbol_host_tools(Symbol(Tools(), name="text"), owner="text"),
        *symbol_host_tools(Symbol(Greeter(), name="greet"), owner="greeter"),
        *discovery_tools(lambda: box[0]),
    ]
    box.append(ToolRegistry(tools))

    async def call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        tool = box[0].get(name)
        assert tool is not None
        return tool.fn(*args, **kwargs)

    def entries() -> list[ToolEntry]:
        return [ToolEntry(t.name, t.description, tool_contract(t)) for t in box[0]]

    sandbox = Sandbox(workspace=workspace, call_tool=call, tools=entries)
    yield sandbox
    await sandbox.close()


async def test_proxy_contract_signature_and_annotations(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "import inspect, typing\n"
        "print(await text.count('a b c'))\n"
        "print(inspect.signature(text.count))\n"
        "print(text.count.contract['name'], text.count.contract['tag'])\n"
        "print(text.count.__annotations__)\n"
        "print(inspect.signature(greet.hello))\n"
        "try:\n"
        "    typing.get_type_hints(greet.hello)\n"
        "except NameError as exc:\n"
        "    print('NameError', exc)\n"
        "class Results: pass\n"
        "print(typing.get_type_hints(greet.hello, localns={'Results': Results})['return'])\n"
        "greet.hello.contract['parameters'].clear()\n"
        "print(len(greet.hello.contract['parameters']))\n"
    )
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "3",
        "(text: str, /, *, unit: str = 'words', limit: int = 200) -> int",
        "text.count observation",
        "{'text': <class 'str'>, 'unit': <class 'str'>, 'limit': <class 'int'>, "
        "'return': <class 'int'>}",
        "(name: str, /, *, loud: bool = False) -> 'Results'",
        "NameError name 'Results' is not defined",
        "<class '__main__.Results'>",
        "0",
    ]


async def test_doc_and_apropos_from_the_sandbox(sandbox: Sandbox) -> None:
    result = await sandbox.run("print(await doc('text.count'))\n")
    assert result.error is None, result.error
    assert result.stdout == (
        "text.count(text: str, /, *, unit: str = 'words', limit: int = 200) -> int\n"
        "Tag: observation\n\nCount units of text.\n\nParameters:\n"
        "- text: str — positional-only, required\n"
        "- unit: str — keyword-only, default 'words'\n"
        "- limit: int — keyword-only, default 200\n"
        "Returns: int\n"
    )
