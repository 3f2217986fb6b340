"""What a fold row shows when opened: the folded turns read back from the stored history."""

from __future__ import annotations

from pathlib import Path

from sample_turns import turn_events

from vis_core.context.folded_view import SHOWN_TURNS, folded_story
from vis_core.store import Store


def test_a_fold_over_many_turns_shows_the_first_and_counts_the_rest(tmp_path: Path) -> None:
    with Store(tmp_path / "vis.db") as store:
        sid = store.create_session("/w", "/w").id
        for n in range(1, 51):
            store.append_many(
                turn_events(sid, f"turn-{n}", f"ask {n}\nmore", f"answer {n}", [], position=n)
            )
        story = folded_story(store, sid, [(n, 0, 0) for n in range(1, 46)])
        ranged = folded_story(store, sid, [(50, 1, 2)])
    lines = story.splitlines()
    assert lines[0] == "Left the model's context (t1-t45); the history keeps it:"
    assert lines[2:6] == ["t1 › ask 1", "    more", "  answer", "    answer 1"]
    assert "t30 › ask 30" in lines and "t31 › ask 31" not in lines
    assert lines[-1] == f"… and {45 - SHOWN_TURNS} more turns up to t45: the transcript has them."
    assert "answer 46" not in story
    # a range of steps shows only those steps: no second request line, no answer
    assert ranged.splitlines()[2:] == ["t50/i1-i2 › ask 50"]
