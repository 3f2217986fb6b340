"""Truncation: 50 KB / 2,000 lines, head for reads, tail for commands, the full text saved."""

from __future__ import annotations

import re
from pathlib import Path

from vis_core.system.truncate import fit_output
from vis_core.text_limits import MAX_BYTES, MAX_LINES, Keep, truncate


def test_short_text_is_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert fit_output("a\nb\n", out, keep=Keep.HEAD, label="x") == "a\nb\n"
    assert not out.exists()


def test_head_keeps_the_first_lines_and_saves_the_rest(tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(1, 5001))
    out = fit_output(text, tmp_path / "out", keep=Keep.HEAD, label="grep")
    assert out.startswith("line 1\n")
    assert f"line {MAX_LINES}\n" in out and f"line {MAX_LINES + 1}\n" not in out
    match = re.search(r"Full output saved to: (\S+)\]$", out)
    assert match, out[-300:]
    assert Path(match.group(1)).read_text() == text
    assert f"showing the first {MAX_LINES:,} of 5,000 lines" in out


def test_tail_keeps_the_last_lines(tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(1, 3001))
    out = fit_output(text, tmp_path, keep=Keep.TAIL, label="shell")
    assert out.rstrip().endswith("line 3000")
    assert "line 1000\n" not in out and "line 1001\n" in out
    assert out.startswith("[Output truncated: showing the last 2,000 of 3,000 lines")


def test_bytes_limit_applies_before_lines() -> None:
    text = ("x" * 1000 + "\n") * 100  # 100 KB in 100 lines
    cut = truncate(text, Keep.HEAD)
    assert cut.truncated and cut.shown_bytes <= MAX_BYTES
    assert cut.shown_lines == MAX_BYTES // 1001


def test_one_giant_line_is_cut_not_dropped() -> None:
    cut = truncate("é" * 100_000, Keep.TAIL)
    assert cut.truncated and 0 < len(cut.text.encode()) <= MAX_BYTES
    assert set(cut.text) == {"é"}
