"""The forms of a block: each top-level statement's source, lines and whether it ran."""

from __future__ import annotations

from vis_core.sandbox import Sandbox


async def test_forms_of_a_finished_block(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "import asyncio\n@staticmethod\ndef helper(n):\n    return n\nawait asyncio.sleep(0)\n"
    )
    assert result.error is None
    assert [(f["line"], f["end_line"], f["status"]) for f in result.forms] == [
        (1, 1, "ok"),
        (2, 4, "ok"),
        (5, 5, "ok"),
    ]
    assert result.forms[1]["source"] == "@staticmethod\ndef helper(n):\n    return n"
    assert [f["index"] for f in result.forms] == [0, 1, 2]


async def test_forms_show_which_statement_raised(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "x = 1\ndef inner():\n    return {}['missing']\nvalue = (\n    inner()\n)\nprint('after')\n"
    )
    assert result.error is not None and "KeyError" in result.error
    assert [(f["source"].splitlines()[0], f["status"]) for f in result.forms] == [
        ("x = 1", "ok"),
        ("def inner():", "ok"),
        ("value = (", "error"),
        ("print('after')", "not-run"),
    ]
    assert result.stdout == ""


async def test_forms_of_an_awaited_failure_and_a_syntax_error(sandbox: Sandbox) -> None:
    result = await sandbox.run("import asyncio\nawait asyncio.sleep(0)\nawait fail('ValueError')\n")
    assert [f["status"] for f in result.forms] == ["ok", "ok", "error"]
    broken = await sandbox.run("x = (\n")
    assert broken.error is not None and broken.forms == ()
