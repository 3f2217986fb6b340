"""vis run's quiet lines for a fold and a background command: untrusted text stays text."""

from __future__ import annotations

import io

import pytest

from vis_core.events import BackgroundCommandEnded, FoldCreated
from vis_core.printmode import PrintRenderer


@pytest.mark.parametrize("cut_at", [98, 99])
def test_a_long_gist_cut_at_an_escape_does_not_break_the_line(
    cut_at: int, capsys: pytest.CaptureFixture[str]
) -> None:
    renderer = PrintRenderer(as_json=False)
    gist = "x" * cut_at + "[bold]" + "y" * 50  # markup-looking text right at the cut
    renderer(FoldCreated("s", key="t1", gist=gist))
    renderer(
        BackgroundCommandEnded(
            "s", handle_id="sh-1", command="echo [red]" + "z" * 200, state="exit 0"
        )
    )
    fold, background = capsys.readouterr().out.splitlines()
    assert fold == "⋯ folded t1 · " + (gist[:99] + "…")
    assert (
        background
        == "⋯ background command sh-1 ended: exit 0 · " + ("echo [red]" + "z" * 200)[:99] + "…"
    )


def test_a_block_s_output_cut_by_the_sandbox_says_where_it_was_saved() -> None:
    """The sandbox's note of a cut output (where the whole of it was saved) shows above the
    last lines; markup-looking output shows as printed."""
    from rich.console import Console

    from vis_core.printmode import printed_lines

    note = (
        "[Output truncated: showing the last 2 of 9,000 lines (8 B of 80.0 KB). "
        "Full output saved to: /v/out.txt]"
    )
    console = Console(width=300, color_system=None, record=True, file=io.StringIO())
    for line in printed_lines(f"{note}\n\nlast\nline [red]x[/]\n"):
        console.print(line)
    assert console.export_text().splitlines() == [
        f"  │ {note}",
        "  │ … 8,998 earlier lines",  # of the 9,000 it printed, all but the two shown
        "  │ last",
        "  │ line [red]x[/]",
    ]
    assert printed_lines("") == [] and printed_lines("\n\n") == []
