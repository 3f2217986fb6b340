"""The ``/`` completion ranking: names that start with the text, then fuzzy matches."""

from __future__ import annotations

from vis_tui.widgets.completion import CommandChoice, matches

CHOICES = [CommandChoice(name, f"/{name}", "") for name in ("compact", "trust", "settings", "help")]


def test_prefix_matches_come_first_then_fuzzy_ones_best_first() -> None:
    assert [c.name for c in matches(CHOICES, "/")] == ["compact", "trust", "settings", "help"]
    assert [c.name for c in matches(CHOICES, "/cmp")] == ["compact"]
    assert [c.name for c in matches(CHOICES, "/st")] == ["trust", "settings"]
    assert [c.name for c in matches(CHOICES, "/se")] == ["settings"]
    assert matches(CHOICES, "/zz") == [] and matches(CHOICES, "/help me") == []
    assert matches(CHOICES, "help") == []
