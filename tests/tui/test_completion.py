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


def test_a_query_matches_names_holding_its_words_and_only_loosely_the_others() -> None:
    from vis_tui.fuzzy import split_rank

    ids = ["anthropic/claude-opus-4-5", "openai/gpt-5", "openai/gpt-4.1-nano"]
    assert split_rank("gpt5", ids, str) == (["openai/gpt-5"], [])
    assert split_rank("4.1 nano", ids, str) == (["openai/gpt-4.1-nano"], [])
    assert split_rank("openai/", ids, str)[0] == ["openai/gpt-5", "openai/gpt-4.1-nano"]
    # its letters in order, but another model: a candidate, not a match
    assert split_rank("anthropic/claude-opus-5", ids, str) == ([], ["anthropic/claude-opus-4-5"])
