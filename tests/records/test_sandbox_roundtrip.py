"""A real sandbox block calls tools returning records, passes them back and iterates sequences."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from vis_core.records import coerce_arguments
from vis_core.sandbox.host import Sandbox, ToolEntry

from . import examples as ex


def list_pages() -> ex.PageList:
    """List pages."""
    return ex.PageList((ex.Page("intro"), ex.Page("setup"), ex.Page("faq")), 40)


def get_status() -> ex.Status:
    """Report the environment status."""
    return ex.Status("DEV04")


def first_title(pages: ex.PageList) -> str:
    """The title of the first page, from a rebuilt PageList."""
    assert type(pages) is ex.PageList and type(pages.results[0]) is ex.Page
    return pages.results[0].title


def kind_of(value: ex.Status | ex.TriggerResult | None) -> str:
    """Which class the argument was rebuilt into."""
    return type(value).__name__


TOOLS = {
    "trigger": ex.trigger,
    "status": ex.status,
    "list_pages": list_pages,
    "get_status": get_status,
    "first_title": first_title,
    "kind_of": kind_of,
}


async def call_tool(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What the engine does with a sandbox tool call: rebuild records, then invoke."""
    fn = TOOLS[name]
    args, kwargs = coerce_arguments(fn, args, kwargs)
    return fn(*args, **kwargs)


BLOCK = """
result = await trigger("docs/build")
print(type(result).__name__, result.http_code, result["job_path"])
print(await status(result))
print(await status({"http_code": 200, "job_path": "dict"}))

from dataclasses import dataclass

@dataclass
class Mine:
    http_code: int
    job_path: str

print(await status(Mine(202, "mine")))
print(await kind_of(result), await kind_of({"env": "E"}), await kind_of(None))

pages = await list_pages()
print([page.title for page in pages], len(pages), bool(pages), pages.total)
print(pages[0].title, pages[-1].title, [p.title for p in pages[1:]], type(pages[1:]).__name__)
print(await first_title(pages))

status_record = await get_status()
print(status_record)
print(repr(status_record))
print(status_record.next_phase)
try:
    status_record.text_report
except AttributeError as error:
    print("AttributeError:", error)
try:
    status_record["missing"]
except KeyError as error:
    print("KeyError:", error)
try:
    status_record.env = "PROD"
except AttributeError as error:
    print("read-only")
"""

EXPECTED = """\
TriggerResult 201 docs/build
docs/build: 201
dict: 200
mine: 202
TriggerResult Status NoneType
['intro', 'setup', 'faq'] 3 True 40
intro faq ['setup', 'faq'] list
intro
DEV04: next phase 1
Status(env='DEV04', phases=[], next_phase=1)
1
AttributeError: 'Status' record has no field 'text_report'; available fields: env, phases, \
next_phase
KeyError: "'Status' record has no field 'missing'; available fields: env, phases, next_phase"
read-only
"""


async def test_block_round_trips_records_through_real_tools(workspace: Path) -> None:
    sandbox = Sandbox(
        workspace=workspace,
        call_tool=call_tool,
        tools=lambda: [ToolEntry(name, fn.__doc__ or "") for name, fn in TOOLS.items()],
    )
    try:
        result = await sandbox.run(textwrap.dedent(BLOCK))
    finally:
        await sandbox.close()
    assert result.error is None, result.error
    assert result.stdout == EXPECTED
