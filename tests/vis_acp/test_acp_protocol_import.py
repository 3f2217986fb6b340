"""`vis acp` imports the protocol's schema without parsing its source for field docstrings."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
from pydantic import BaseModel, ConfigDict
from pydantic._internal import _fields

extractor = _fields.extract_docstrings_from_cls
import vis_core.acp
import acp.schema as schema

field = schema.InitializeRequest.model_fields["protocol_version"]
assert field.description is None, field.description  # skipped: pydantic parsed no source
assert _fields.extract_docstrings_from_cls is extractor  # put back for everything else
request = schema.InitializeRequest.model_validate({"protocolVersion": 1})
assert request.protocol_version == 1
assert request.model_dump(by_alias=True, exclude_none=True)["protocolVersion"] == 1


class Later(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    name: str
    '''Its docstring.'''


assert Later.model_fields["name"].description == "Its docstring."
print("ok")
"""


def test_the_schema_is_built_without_docstrings_and_validates_and_pydantic_is_put_back(tmp_path):
    # reading them parsed the source of ~280 classes: ~0.17 s of CPU at each `vis acp` start
    child = tmp_path / "child.py"  # a file: pydantic reads a class's docstrings from its source
    child.write_text(CHILD, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-I", str(child)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
