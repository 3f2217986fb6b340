"""``defs()`` in a real child: listing, search, paging, source, details and errors."""

from __future__ import annotations

import hashlib

import pytest

from vis_core.sandbox import Sandbox

SUMMARIZE = '''def summarize_rows(rows, limit=10, *cols, sep=", ", strict=None, **opts):
    """Summarize rows by column.

    Longer explanation."""
    out = json.dumps(rows[:limit])
    return helper_missing(out) if len(rows) > THRESHOLD else out
'''

SETUP = (
    SUMMARIZE
    + '''
import json
THRESHOLD = 3

async def count_items(items, /, scale=1.5):
    "Count items."
    return len(items) * scale

class Point:
    """A 2-D point."""
    def __init__(self, x, y=0):
        self.x, self.y = x, y

rows = [1, 2, 3]
label = "abc"
import sqlite3
conn = sqlite3.connect(":memory:")
'''
)


@pytest.fixture
async def with_helpers(sandbox: Sandbox) -> Sandbox:
    result = await sandbox.run(SETUP)
    assert result.error is None, result.error
    return sandbox


async def _out(box: Sandbox, code: str) -> str:
    result = await box.run(code)
    assert result.error is None, result.error
    return result.stdout


async def test_listing_shows_hints_gists_and_variables_without_values(
    with_helpers: Sandbox,
) -> None:
    text = await _out(with_helpers, "print(defs())")
    assert text.splitlines() == [
        "Helpers:",
        "  class Point(x, y=<int>) — A 2-D point.",
        "  async count_items(items, /, scale=<float>) — Count items.",
        "  summarize_rows(rows, limit=<int>, *cols, sep=<str>, strict=<None>, **opts)"
        " — Summarize rows by column.",
        "Variables:",
        "  THRESHOLD: int",
        "  conn: Connection  [not saved: TypeError: cannot pickle 'sqlite3.Connection' object]",
        "  label: str, 3 chars",
        "  rows: list, 3 items",
    ]
    assert "abc" not in text and "defs" not in text and "echo" not in text


async def test_call_hints_are_at_most_120_characters(sandbox: Sandbox) -> None:
    params = ", ".join(f"parameter_number_{i}={i}" for i in range(12))
    await sandbox.run(f"def wide({params}):\n    return 1\n")
    text = await _out(sandbox, "print(defs())")
    row = text.splitlines()[1].strip()
    assert len(row) == 120 and row.endswith("…)")
    assert row.startswith("wide(parameter_number_0=<int>")


async def test_pattern_matches_names_gists_and_types_case_sensitively(
    with_helpers: Sandbox,
) -> None:
    text = await _out(with_helpers, "print(defs(pattern='summar|count'))")
    assert text.splitlines() == [
        "Helpers 1–2 (2 of 3 match):",
        "  async count_items(items, /, scale=<float>) — Count items.",
        "  summarize_rows(rows, limit=<int>, *cols, sep=<str>, strict=<None>, **opts)"
        " — Summarize rows by column.",
        "Variables: none match (4 in all)",
    ]
    by_gist = await _out(with_helpers, "print(defs(pattern='2-D'))")
    assert "class Point" in by_gist
    by_type = await _out(with_helpers, "print(defs(pattern='^list$|^Connection$'))")
    assert by_type.splitlines()[1:] == [
        "Variables 1–2 (2 of 4 match):",
        "  conn: Connection  [not saved: TypeError: cannot pickle 'sqlite3.Connection' object]",
        "  rows: list, 3 items",
    ]
    assert "none match" in await _out(with_helpers, "print(defs(pattern='SUMMAR'))")


async def test_paging_with_limit_and_offset(with_helpers: Sandbox) -> None:
    first = await _out(with_helpers, "print(defs(limit=2))")
    assert first.splitlines()[0] == "Helpers 1–2 (3 in all); next page: offset=2:"
    second = await _out(with_helpers, "print(defs(limit=2, offset=2))")
    assert second.splitlines()[:2] == [
        "Helpers 3–3 (3 in all):",
        "  summarize_rows(rows, limit=<int>, *cols, sep=<str>, strict=<None>, **opts)"
        " — Summarize rows by column.",
    ]
    past = await _out(with_helpers, "print(defs(offset=50))")
    assert past.splitlines()[0] == (
        "Helpers: none on this page (3 in all; offset=50 is past the end)"
    )


async def test_source_and_variable_rows_by_name(with_helpers: Sandbox) -> None:
    assert await _out(with_helpers, "print(defs('summarize_rows'), end='')") == SUMMARIZE
    assert await _out(with_helpers, "print(defs('rows'))") == "rows: list, 3 items\n"


async def test_details_give_origin_digest_and_names(with_helpers: Sandbox) -> None:
    text = await _out(with_helpers, "print(defs('summarize_rows', details=True))")
    digest = hashlib.sha256(SUMMARIZE.encode()).hexdigest()
    assert text.splitlines() == [
        "summarize_rows: function",
        "origin: block 1",
        f"source sha256: {digest}",
        "names from the source (hints, not proof of dependency):",
        "  json: global module, present",
        "  THRESHOLD: global int, present",
        "  helper_missing: global, missing",
    ]


async def test_details_of_a_restored_helper(sandbox: Sandbox) -> None:
    await sandbox.run("def f(x):\n    return x\n")
    proc = sandbox._proc
    assert proc is not None
    proc.kill()
    await proc.wait()
    text = await _out(sandbox, "print(defs('f', details=True))\nprint(defs())")
    assert "origin: restored from the last snapshot (defined in block 1)" in text
    assert "  f(x)  [restored]" in text


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("defs(limit=0)", "defs: limit must be an integer from 1 to 100, got 0"),
        ("defs(limit=101)", "defs: limit must be an integer from 1 to 100, got 101"),
        ("defs(offset=-1)", "defs: offset must be an integer of 0 or more, got -1"),
        ("defs(pattern='(')", "defs: pattern '(' is not a valid regular expression"),
        ("defs('nope')", "defs: no helper or variable named 'nope'"),
        ("defs('echo')", "defs: 'echo' is a tool, not a helper; read it with doc('echo')"),
    ],
)
async def test_errors_are_clear_value_errors(sandbox: Sandbox, call: str, message: str) -> None:
    result = await sandbox.run(f"print({call})")
    assert result.error is not None
    assert f"ValueError: {message}" in result.error


async def test_empty_session(sandbox: Sandbox) -> None:
    assert await _out(sandbox, "print(defs())") == "Helpers: none\nVariables: none\n"


async def test_a_helper_is_one_in_the_block_that_defines_it(sandbox: Sandbox) -> None:
    """defs() in the defining block listed the helper as a variable ("summarize_rows:
    function") and defs(name) gave that row, not its source, until the next block."""
    source = (
        'def summarize_rows(rows, limit=5):\n    """Sum the rows."""\n    return rows[:limit]\n'
    )
    before = "print(defs('summarize_rows'))\n"  # not defined yet when this runs
    text = await _out(
        sandbox,
        f"print(defs())\n{source}print(defs())\nprint(defs('summarize_rows'), end='')\n",
    )
    assert text == (
        "Helpers: none\nVariables: none\n"
        "Helpers:\n  summarize_rows(rows, limit=<int>) — Sum the rows.\nVariables: none\n" + source
    )
    assert "Helpers:\n  summarize_rows(" in await _out(sandbox, "print(defs())")
    redefined = "def summarize_rows(rows):\n    return rows\n"
    text = await _out(sandbox, f"{redefined}print(defs('summarize_rows'), end='')")
    assert text == redefined  # the block's own definition, not the earlier one
    result = await sandbox.run(f"{before}def later():\n    pass\n")
    assert result.error is None and result.stdout == redefined + "\n"
