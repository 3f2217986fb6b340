"""Packages that lend names on first use: every ``as`` import a type checker reads is lent, and
each lent name is the object its module defines."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from vis_core.lazy import lent_names

LENDERS = ("vis_core.extension", "vis_core.frontend", "vis_core.sandbox", "vis_core.tools")


def _type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    """What a type checker reads: ``as`` imports of the module's ``if TYPE_CHECKING:`` block."""
    (block,) = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    return {
        alias.asname: (str(node.module), alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname
    }


@pytest.mark.parametrize("package", LENDERS)
def test_every_name_a_type_checker_sees_is_lent_as_that_object(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    lent = lent_names(module.__file__)
    assert lent == _type_checking_imports(Path(module.__file__).read_text(encoding="utf-8"))
    for name, (home, there) in lent.items():
        value = getattr(module, name)
        if home == package:
            assert value is importlib.import_module(f"{package}.{there}")
        else:
            assert value is getattr(importlib.import_module(home), there)
    with pytest.raises(AttributeError, match="has no attribute 'not_lent'"):
        _ = module.not_lent


def test_an_import_ruff_wrapped_over_lines_is_read_whole(tmp_path: Path) -> None:
    source = tmp_path / "package.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:  # what a type checker sees\n"
        "    from a.b import Event  # for annotations only\n"
        "    from a.b import (\n"
        "        a_rather_long_name as a_rather_long_name,  # lent\n"
        "        Other as Renamed,\n"
        "    )\n\n"
        "    from c import d as d\n"
        "from e import f as f\n",
        encoding="utf-8",
    )
    assert lent_names(str(source)) == {
        "a_rather_long_name": ("a.b", "a_rather_long_name"),
        "Renamed": ("a.b", "Other"),
        "d": ("c", "d"),
    }
