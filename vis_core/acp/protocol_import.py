"""Import the ``acp`` package without building its fields' descriptions, which Vis never reads.

``acp.schema`` defines ~280 pydantic models with ``use_attribute_docstrings=True``: pydantic then
finds each class's source text and parses it to read the docstring under each field, ~0.17 s of
CPU at every ``vis acp`` start (~40% of importing the package; a quarter of one editor session's
CPU, bench/acp_session.py). Those descriptions only feed JSON schemas, which Vis never makes
from these models, so the package is imported with that extraction finding no docstrings;
validation and serialization do not read them. A pydantic without that function (a later
release) imports the package as it is.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

_EXTRACTOR = "extract_docstrings_from_cls"  # pydantic._internal._fields, pydantic 2.7+


def import_protocol() -> None:
    """Import ``acp`` (and so its schema) once, skipping its fields' attribute docstrings."""
    if "acp.schema" in sys.modules:
        return
    fields: Any = importlib.import_module("pydantic._internal._fields")
    original = getattr(fields, _EXTRACTOR, None)
    if not callable(original):
        importlib.import_module("acp")
        return
    setattr(fields, _EXTRACTOR, _no_docstrings)
    try:
        importlib.import_module("acp")
    finally:
        setattr(fields, _EXTRACTOR, original)


def _no_docstrings(*_: Any, **__: Any) -> dict[str, str]:
    return {}
