"""Tool proxies in a real child: round trips, errors, concurrency, namespaces, handles."""

from __future__ import annotations

import asyncio

from vis_core.sandbox import Sandbox, ToolEntry
from vis_core.system.loops import running_loop

from .conftest import HostTools, MakeSandbox


async def test_tool_call_round_trip_keeps_wire_types(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    result = await sandbox.run(
        "r = await echo(1, (2, 3), b'\\x00raw', {4, 5}, None, 1.5, flag=True, m={1: 'one'})\n"
        "print(r['args'])\nprint(r['kwargs'])\n"
    )
    assert result.error is None
    assert result.stdout.splitlines() == [
        "(1, (2, 3), b'\\x00raw', {4, 5}, None, 1.5)",
        "{'flag': True, 'm': {1: 'one'}}",
    ]
    name, args, kwargs = host_tools.calls[-1]
    assert name == "echo"
    assert args == (1, (2, 3), b"\x00raw", {4, 5}, None, 1.5)
    assert kwargs == {"flag": True, "m": {1: "one"}}


async def test_plain_and_tagged_results_come_back_equal(sandbox: Sandbox) -> None:
    # plain JSON data is not walked again in the child; anything tagged, at any depth, is
    result = await sandbox.run(
        "values = [\n"
        "    {'a': [1, {'b': '\"$\": not a tag', '$x': None}], 'c': 2.5},\n"
        "    ['$', '\"$\":', {'k': ['v']}],\n"
        "    {'$': 'a dollar key'},\n"
        "    [{'deep': [(1, 2)]}],\n"
        "    {'n': {1: 'int key'}},\n"
        "]\n"
        "for v in values:\n"
        "    back = await same(v)\n"
        "    print(back == v, repr(back) == repr(v))\n"
    )
    assert result.error is None, result.error
    assert result.stdout == "True True\n" * 5


async def test_values_nested_deeper_than_orjson_writes_still_cross(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "v = 'leaf'\nfor _ in range(400):\n    v = [v]\nback = await same(v)\nprint(back == v)\n"
    )
    assert result.error is None, result.error
    assert result.stdout == "True\n"


async def test_text_that_cannot_be_written_fails_in_the_block_and_never_hangs(
    sandbox: Sandbox,
) -> None:
    result = await asyncio.wait_for(
        sandbox.run(
            "for call in (lambda: same('x\\udcff'), lambda: undecodable('return'),\n"
            "             lambda: undecodable('raise')):\n"
            "    try:\n"
            "        await call()\n"
            "    except Exception as exc:\n"
            "        print(type(exc).__name__, str(exc).encode('unicode_escape').decode())\n"
            "raise ValueError('x\\udcff')\n"
        ),
        30,
    )
    refused, unsent, raised = result.stdout.splitlines()
    # the argument (os.listdir's name of a file that is not UTF-8): was a bare
    # "UnicodeEncodeError 'utf-8' codec can't encode ..."
    assert refused.startswith(
        "ValueError same: an argument holds '\\\\udcff', a lone surrogate (how os.listdir()"
    ), refused
    assert "as ls() shows the name (e.g. 'data\\\\xff.csv')" in refused, refused
    assert unsent.startswith("VisToolError UnicodeEncodeError: 'utf-8' codec")  # the result
    assert raised == "FileNotFoundError no file x\\\\udcff"  # written out as text by the host
    assert result.error is not None and result.error.endswith("ValueError: x\\udcff\n")


async def test_integers_of_any_size_cross_exactly(sandbox: Sandbox, host_tools: HostTools) -> None:
    result = await sandbox.run(
        "values = (2**63 - 1, -(2**63), 2**64, -(10**30), 10**5000)\n"
        "r = await echo(*values)\n"
        "print(r['args'] == values, [type(v).__name__ for v in r['args']])\n"
    )
    assert result.error is None, result.error
    assert result.stdout == "True ['int', 'int', 'int', 'int', 'int']\n"
    assert host_tools.calls[-1][1] == (2**63 - 1, -(2**63), 2**64, -(10**30), 10**5000)


async def test_tool_exceptions_come_back_with_type_and_message(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "for kind in ('ValueError', 'FileNotFoundError', 'PermissionError', 'TimeoutError',"
        " 'custom'):\n"
        "    try:\n"
        "        await fail(kind, f'{kind} happened')\n"
        "    except Exception as exc:\n"
        "        print(type(exc).__name__, isinstance(exc, RuntimeError), exc)\n"
    )
    assert result.error is None
    assert result.stdout.splitlines() == [
        "ValueError False ValueError happened",
        "FileNotFoundError False FileNotFoundError happened",
        "PermissionError False PermissionError happened",
        "TimeoutError False TimeoutError happened",
        "VisToolError True _CustomError: custom happened",
    ]


async def test_uncaught_tool_error_traceback_points_at_the_call(sandbox: Sandbox) -> None:
    result = await sandbox.run("x = 1\nawait fail('ValueError', 'bad input')\n")
    assert result.error is not None
    assert 'File "<block 1>", line 2, in <module>' in result.error
    assert result.error.rstrip().endswith("ValueError: bad input")
    assert "vis_core" not in result.error


async def test_concurrent_calls_are_in_flight_together(sandbox: Sandbox) -> None:
    # each call returns only when three calls are waiting on the host at the same time
    result = await sandbox.run(
        "import asyncio\nprint(await asyncio.gather(gate(3), gate(3), gate(3)))"
    )
    assert result.error is None, result.error
    assert result.stdout == "[3, 3, 3]\n"


async def test_a_call_the_block_stops_awaiting_is_cancelled_on_the_host(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    result = await sandbox.run(
        "import asyncio\n"
        "try:\n"
        "    await asyncio.wait_for(hang('slow'), 0.05)\n"
        "except TimeoutError:\n"
        "    print('timed out')\n"
        "print(await echo(1))\n"
    )
    assert result.error is None, result.error
    assert result.stdout == "timed out\n{'args': (1,), 'kwargs': {}}\n"
    assert host_tools.cancelled == ["slow"]  # the child said so; the host stopped the tool
    assert not [task for task in sandbox._tasks if task.done()]  # no served call is kept


async def test_dotted_names_become_namespaces_with_docs_and_signatures(sandbox: Sandbox) -> None:
    result = await sandbox.run(
        "import inspect\n"
        "print(await git.status('src', short=True))\n"
        "print(git.status.__name__, git.status.__doc__)\n"
        "print(inspect.signature(git.status))\n"
        "print(git.status.contract['name'])\n"
        "print(git)\n"
    )
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "clean ('src',) {'short': True}",
        "status Show the working tree status.",
        "(path: str = '.', *, short=False)",
        "git.status",
        "<tools git: status>",
    ]


async def test_handles_stay_on_the_host(sandbox: Sandbox, host_tools: HostTools) -> None:
    result = await sandbox.run(
        "sh = await shell('make test')\n"
        "print(sh)\n"
        "print(await sh.wait())\n"
        "print(await sh.logs())\n"
        "print(await describe(sh))\n"
        "print(hasattr(sh, 'secret'))\n"
    )
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "<Shell 'make test'>",
        "0",
        "$ make test",
        "done",
        "Shell make test",
        "False",
    ]
    assert host_tools.calls[-1][1][0] is host_tools.shells[0]  # the same host object came back


async def test_tool_list_is_refreshed_before_each_block(
    make_sandbox: MakeSandbox, host_tools: HostTools
) -> None:
    entries = [ToolEntry("echo")]
    box = make_sandbox(tools=lambda: entries)
    first = await box.run("print(echo)\nprint('git' in dir())")
    assert first.stdout == "<tool echo>\nFalse\n"
    entries.append(ToolEntry("git.log", "Show commits."))
    entries.remove(entries[0])
    second = await box.run("print(git.log.__doc__)\nprint('echo' in dir())")
    assert second.error is None, second.error
    assert second.stdout == "Show commits.\nFalse\n"


async def test_the_tool_list_is_made_off_the_loop(
    make_sandbox: MakeSandbox, host_tools: HostTools
) -> None:
    """A session's first tool list renders every tool's contract and imports what renders
    them (0.1-0.3 s): on the loop, the first block froze keys and drawing. The child's start
    and each block ask for it in a thread."""
    asked_on_loop: list[bool] = []

    def tools() -> list[ToolEntry]:
        asked_on_loop.append(running_loop() is not None)
        return host_tools.entries

    box = make_sandbox(tools=tools)
    for n in (1, 2):
        result = await box.run(f"print(await echo({n}))")
        assert result.error is None, result.error
    assert asked_on_loop == [False, False, False]  # the start's, then one before each block


async def test_user_names_win_over_new_tools(make_sandbox: MakeSandbox) -> None:
    entries: list[ToolEntry] = []
    box = make_sandbox(tools=lambda: entries)
    await box.run("echo = 'mine'")
    entries.append(ToolEntry("echo"))
    result = await box.run("print(echo)")
    assert result.stdout == "mine\n"


async def test_unencodable_arguments_fail_in_the_block(sandbox: Sandbox) -> None:
    result = await sandbox.run("await echo(1, [0, 1, object()])")
    assert result.error is not None
    assert "args[1][2] is an object, which cannot cross the sandbox boundary" in result.error
    assert 'File "<block 1>", line 1' in result.error and "vis_core" not in result.error


async def test_long_messages_and_many_calls_in_flight_cross_whole(sandbox: Sandbox) -> None:
    # messages longer than one read of a pipe, and many short ones that share a read
    result = await sandbox.run(
        "import asyncio\n"
        "big = 'x' * 3_000_000\n"
        "calls = [echo(big + str(i)) for i in range(3)] + [echo(i) for i in range(200)]\n"
        "replies = await asyncio.gather(*calls)\n"
        "print([len(r['args'][0]) for r in replies[:3]], replies[2]['args'][0][-2:])\n"
        "print(sum(r['args'][0] for r in replies[3:]))\n"
    )
    assert result.error is None, result.error
    assert result.stdout.splitlines() == ["[3000001, 3000001, 3000001] x2", str(sum(range(200)))]


async def test_a_call_never_awaited_says_to_await_it(
    sandbox: Sandbox, host_tools: HostTools
) -> None:
    calls = len(host_tools.calls)
    result = await sandbox.run("x = echo(1)\nprint(x)\nprint(same(2))\nimport asyncio\n")
    assert result.error is None, result.error
    lines = result.stdout.splitlines()
    assert lines[0].startswith("<coroutine object echo at 0x")  # not Child.request
    assert "<block 1>:3: same(…) was never awaited, so it did not run: write await same(…)" in lines
    assert lines[-1] == (
        "[vis: x holds echo(…), which was never awaited, so it did not run: "
        "write x = await echo(…)]"
    )
    assert "tracemalloc" not in result.stdout
    assert len(host_tools.calls) == calls  # neither ran
    again = await sandbox.run("print(await echo(3))\n")  # told once: x is not named again
    assert "never awaited" not in again.stdout and again.error is None


async def test_other_warnings_still_print_as_python_prints_them(sandbox: Sandbox) -> None:
    result = await sandbox.run("import warnings\nwarnings.warn('careful', UserWarning)\n")
    assert "<block 1>:2: UserWarning: careful" in result.stdout
