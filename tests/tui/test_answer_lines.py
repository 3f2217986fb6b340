"""An answer's blocks, streamed: a live paragraph that only grows is not parsed again."""

from __future__ import annotations

import random

import pytest

from vis_tui.widgets import answer_lines
from vis_tui.widgets.answer_lines import AnswerLines, goes_on_paragraph

LINE_STARTS = ["word", "  word", "    code?", "x", "\xa0é", "2024 was", "1. item", "- item", "* x"]
LINE_STARTS += ["# title", "===", "---", "| a | b |", "|---|---|", "> quote", "```", "<div>"]
LINE_STARTS += ["[ref]: /url", "", "   ", "    ", "\t tab", ":--", "~~~", "+ x", "_ _ _"]


def test_a_streamed_answer_has_the_blocks_of_one_parsed_on_each_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random answers of lines that go on a paragraph or begin, end or turn it into another
    block, streamed in random cuts (mid-line, mid-marker): after each cut, the blocks are
    those of the same stream with the live block parsed again on every cut."""
    rng = random.Random(3)
    kept = 0
    for _ in range(1200):
        lines = [rng.choice(LINE_STARTS) + rng.choice(["", " more words", "s|", " x ===", "  "])]
        for _ in range(rng.randint(1, 14)):
            plain = rng.random() < 0.8  # mostly lines that go on the paragraph
            start = rng.choice(LINE_STARTS[:5] if plain else LINE_STARTS)
            ends = ["", " and on", " |x|", " 2.", "  ", " ---", "\t", "\r\nx", " [a]: b", "\u2028"]
            lines.append(start + rng.choice(ends))
        text = "\n".join(lines) + rng.choice(["", "\n"])
        streamed, parsed = AnswerLines(), AnswerLines()
        cut = 0
        while cut < len(text):
            cut = min(len(text), cut + rng.randint(1, rng.choice([2, 9, 40])))
            before = streamed.blocks
            streamed.show(text[:cut])
            with monkeypatch.context() as patch:
                patch.setattr(answer_lines, "goes_on_paragraph", lambda *_: False)
                parsed.show(text[:cut])
            assert streamed.blocks == parsed.blocks, (text[:cut], before)
            kept += len(before) == 1 and goes_on_paragraph(before[0].source, "x")
    assert kept > 1000  # many cuts went on a live paragraph without a parse


def test_what_goes_on_a_paragraph() -> None:
    assert goes_on_paragraph("Some words", " and more\nthat go on\n    indented\n")
    assert goes_on_paragraph("Some words\n", "next line")
    for added in [
        "\n\nnew",
        "\n===",
        "\n---",
        "\n- item",
        "\n1. item",
        "\n# h",
        "\n> q",
        "\n|-|-|",
        "\n```",
        "\n<div>",
        "\n    ",
        "\n\tx",
        "\rx",
        "\u2028x",
    ]:
        assert not goes_on_paragraph("Some words", added), added
    assert not goes_on_paragraph("[ref]: /url", " more")  # may become a reference
    assert not goes_on_paragraph("Some ==", "")  # nothing added
