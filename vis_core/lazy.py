"""Names a package lends from other modules, each imported on first use (PEP 562).

The package lists each name once, where a type checker reads it: in its ``if TYPE_CHECKING:``
block, as ``from MODULE import NAME as ALIAS`` (``NAME as NAME`` when it keeps its name; a
submodule is ``from PACKAGE import SUB as SUB``). :func:`lent_names` reads those imports from
the package's source; the ``__getattr__`` of :func:`lender` imports MODULE when ALIAS is first
read and keeps the value on the package. Imports without ``as`` in that block are for
annotations only.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lent_names(file: str) -> dict[str, tuple[str, str]]:
    """``{ALIAS: (MODULE, NAME)}`` of every ``from MODULE import NAME as ALIAS`` in the
    ``if TYPE_CHECKING:`` block of the source ``file`` (a package's ``__file__``)."""
    with open(file, encoding="utf-8") as source:
        lines = source.read().split("\n")
    start = [line.split("#", 1)[0].rstrip() for line in lines].index("if TYPE_CHECKING:") + 1
    statements: list[str] = []
    for line in lines[start:]:
        code = line.split("#", 1)[0].rstrip()
        if not code:
            continue
        if not code[0].isspace():
            break  # the block ended
        if code.lstrip().startswith(("from ", "import ")):
            statements.append(code)
        elif statements:  # the next line of a parenthesized import
            statements[-1] += code
    found: dict[str, tuple[str, str]] = {}
    for statement in statements:
        words = statement.replace("(", " ").replace(")", " ").split()
        if len(words) < 4 or words[0] != "from" or words[2] != "import":
            continue
        for item in " ".join(words[3:]).split(","):
            parts = item.split()
            if len(parts) == 3 and parts[1] == "as":
                found[parts[2]] = (words[1], parts[0])
    return found


def lender(package: str, names: Mapping[str, tuple[str, str]]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``, lending ``names`` (see :func:`lent_names`)."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, there = where
        if module == package:  # one of its submodules
            value = importlib.import_module(f"{package}.{there}")
        else:
            value = getattr(importlib.import_module(module), there)
        vars(sys.modules[package])[name] = value  # the next read finds it there
        return value

    return __getattr__
