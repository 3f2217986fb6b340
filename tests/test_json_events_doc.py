"""docs/json-events.md, the reference of `vis run --json`'s lines, names every event type
with its fields, as vis_core/events.py defines them: the page cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

from vis_core import events
from vis_core.model.activity import field_names

DOC = Path(__file__).resolve().parents[1] / "docs" / "json-events.md"
ROW = re.compile(r"^\| `(\w+)` \| ([^|]*) \|", re.MULTILINE)


def _documented() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    return {name: re.findall(r"`(\w+)`", fields) for name, fields in ROW.findall(text)}


def test_every_event_type_is_documented_with_its_fields_in_order() -> None:
    documented = _documented()
    for name, cls in events._EVENT_TYPES.items():
        fields = [f for f in field_names(cls) if f != "session_id"]
        assert documented.get(name) == fields, (
            f"{name}: docs/json-events.md lists {documented.get(name)}, the code {fields}"
        )


def test_the_page_names_no_event_the_code_does_not_have() -> None:
    extra = set(_documented()) - set(events._EVENT_TYPES) - {"CommandResult"}
    assert not extra, f"docs/json-events.md names types that are no events: {sorted(extra)}"
