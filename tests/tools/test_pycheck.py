"""The incremental Python check agrees with a full parse of the patched file."""

from __future__ import annotations

import ast
import random

import pytest

from vis_core.tools.patching import Edit, apply_edits
from vis_core.tools.pycheck import check_python
from vis_core.tools.textfiles import split_lines

MODULE = '''"""Doc."""
import os


@decorator
def first(a):
    if a:
        return 1
    return 2


if os.name == "posix":
    X = 1

try:
    import json
except ImportError:
    json = None


class Thing:
    def method(self):
        return [
            1,
            2,
        ]


def last():
    pass
'''


def full_parse_ok(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


CASES = [
    [Edit(14, 13, "else:\n    X = 2\n")],  # else after a top-level if
    [Edit(6, 5, "@another\n")],  # one more decorator
    [Edit(25, 25, "            1,,\n")],  # broken inside a bracket
    [Edit(30, 30, "    pass\n  bad_indent\n")],
    [Edit(19, 19, "elif True:\n")],  # an except replaced by a dangling elif
    [Edit(2, 2, "import os, (\n")],
    [Edit(31, 30, "last(\n")],  # unclosed call at the end
    [Edit(1, 1, '"""Doc.\n')],  # unterminated docstring at the top
    [Edit(17, 17, "    import json as j\n"), Edit(27, 27, "def last2():\n")],
]


@pytest.mark.parametrize("edits", CASES)
def test_agrees_with_a_full_parse(edits: list[Edit]) -> None:
    lines = split_lines(MODULE)
    applied = apply_edits(lines, edits)
    after = "".join(applied.lines)
    problem = check_python("m.py", MODULE, applied.lines, applied.hunks, created=False)
    assert (problem is None) == full_parse_ok(after), (problem, after)


def test_random_line_edits_agree_with_a_full_parse() -> None:
    rng = random.Random(3)
    snippets = ["x = 1\n", "    y = 2\n", "else:\n", ")\n", "def f():\n", "", "    return 3\n"]
    text = MODULE
    for _ in range(300):
        lines = split_lines(text)
        start = rng.randint(1, len(lines))
        end = rng.choice([start - 1, start, min(start + 1, len(lines))])
        applied = apply_edits(lines, [Edit(start, end, rng.choice(snippets))])
        after = "".join(applied.lines)
        problem = check_python("m.py", text, applied.lines, applied.hunks, created=False)
        assert (problem is None) == full_parse_ok(after), (problem, after)
        if problem is None:
            text = after  # walk on through valid versions


def test_error_lines_are_file_lines() -> None:
    lines = split_lines(MODULE)
    applied = apply_edits(lines, [Edit(25, 25, "            1,,\n")])
    problem = check_python("m.py", MODULE, applied.lines, applied.hunks, created=False)
    assert problem is not None and problem.startswith("Python line 25:")


TRICKY = '''"""Module doc.
x = 1
def looks_like_code():
    pass
"""
import os

QUERY = """
SELECT 1
x = 2
"""

VALUES = [
1,
2,
]


def after():
    return os.name + \\
        "x"


if True:
    pass
else:
    pass
'''


@pytest.mark.parametrize("module", [MODULE, TRICKY], ids=["plain", "strings-and-brackets"])
def test_the_large_file_shortcut_agrees_with_a_full_parse(module: str) -> None:
    import vis_core.tools.pycheck as pycheck

    rng = random.Random(7)
    snippets = [
        "x = 1\n",
        "    y = 2\n",
        "else:\n",
        ")\n",
        "]\n",
        "def f():\n",
        "",
        '"""\n',
        'x = """1"""\n',
        "def g(): pass\n",
        "3,\n",
    ]
    for _ in range(400):
        lines = split_lines(module)
        start = rng.randint(1, len(lines))
        end = rng.choice([start - 1, start, min(start + 1, len(lines))])
        applied = apply_edits(lines, [Edit(start, end, rng.choice(snippets))])
        after = "".join(applied.lines)
        pycheck._starts.clear()  # the shortcut, not a remembered parse, decides
        problem = check_python(  # every file takes the shortcut
            "m.py", module, applied.lines, applied.hunks, created=False, local_check_lines=0
        )
        before_ok = full_parse_ok(module)
        assert (problem is None) == (full_parse_ok(after) or not before_ok), (problem, after)
