"""The Activity model's validation rules, path shortening, wire form and step counts."""

from __future__ import annotations

import dataclasses

import pytest

from vis_core.extension_host.activity_paths import shorten_presentation
from vis_core.model.activity import (
    Activity,
    ActivityAudio,
    ActivityCode,
    ActivityDiff,
    ActivityFile,
    ActivityHeading,
    ActivityImage,
    ActivityMarkdown,
    ActivityPresentation,
    ActivityProgress,
    ActivitySection,
    ActivityTable,
    ActivityTerminal,
    ActivityTerminalLine,
    ActivityText,
    ActivityVideo,
    from_plain,
    step_counts,
    to_plain,
)


def test_a_full_presentation_is_accepted_and_round_trips():
    presentation = ActivityPresentation(
        "npm test && npm run lint",
        "",
        content=(
            ActivityTerminal(
                ("npm test", "&& npm run lint"),
                lines=("41 passed", ActivityTerminalLine("warning: slow test", stream="stderr")),
                exit=0,
                omitted_lines=3,
            ),
            ActivityText("plain"),
            ActivityHeading("Heading"),
            ActivityMarkdown("# title\n\nbody"),
            ActivityCode("print(1)", "python"),
            ActivityDiff("--- a\n+++ b\n"),
            ActivityTable(("test", "file"), (("t1", "a.py"), ("total", "")), paths=("a.py", "")),
            ActivityProgress(3, 10, "files"),
            ActivityImage("plot.png"),
            ActivityVideo("run.mp4"),
            ActivityAudio("note.wav"),
            ActivityFile("report.pdf"),
        ),
        sections=(ActivitySection("Failures", "2 failed", (ActivityText("x"),)),),
        handle_id="comparison-7",
        verdict="passed",
        outcome="41 passed",
        aside="~/vis · exit 0",
        summary_format="markdown",
    )
    assert presentation.content[0].lines[0] == ActivityTerminalLine("41 passed", "stdout")
    assert from_plain(to_plain(presentation)) == presentation


@pytest.mark.parametrize("field", ["headline", "summary"])
def test_headline_and_summary_are_one_line(field):
    kwargs = {"headline": "Run", "summary": "ok", field: "two\nlines"}
    with pytest.raises(ValueError, match="one line"):
        ActivityPresentation(**kwargs)


def test_headline_limit_is_512_utf8_bytes():
    ActivityPresentation("é" * 256, "")  # 512 bytes: accepted
    with pytest.raises(ValueError, match="513 UTF-8 bytes; the limit is 512"):
        ActivityPresentation("é" * 256 + "x", "")
    with pytest.raises(ValueError, match="limit is 512"):
        ActivitySection("ok", "x" * 513)


def test_sections_do_not_nest_and_content_holds_blocks_only():
    section = ActivitySection("s", "")
    with pytest.raises(ValueError, match="cannot hold a section"):
        ActivitySection("outer", "", content=(section,))
    with pytest.raises(ValueError, match="cannot hold a section"):
        ActivityPresentation("h", "", content=(section,))
    with pytest.raises(ValueError, match="use ActivitySection"):
        ActivityPresentation("h", "", sections=(ActivityText("x"),))
    with pytest.raises(ValueError, match="Activity blocks"):
        ActivityPresentation("h", "", content=("just a string",))


def test_verdict_is_top_level_and_passed_or_failed():
    ActivityPresentation("Run tests", "38 passed, 2 failed", verdict="failed")
    with pytest.raises(ValueError, match="verdict must be"):
        ActivityPresentation("Run tests", "", verdict="flaky")
    with pytest.raises(TypeError):
        ActivitySection("s", "", verdict="passed")  # sections do not accept it


def test_handle_id_limits():
    ActivityPresentation("h", "", handle_id="x" * 256)
    for bad, message in [
        ("", "nonblank"),
        ("   ", "nonblank"),
        ("x" * 257, "257 characters; the limit is 256"),
        ("a\nb", "one line"),
        ("é" * 256 + "é", "limit is 256"),
    ]:
        with pytest.raises(ValueError, match=message):
            ActivityPresentation("h", "", handle_id=bad)
    with pytest.raises(ValueError, match="512"):
        ActivityPresentation("h", "", handle_id="€" * 200)  # 200 chars, 600 bytes


def test_table_paths_must_match_rows():
    with pytest.raises(ValueError, match="paths has 1 entries but the table has 2 rows"):
        ActivityTable(("a",), (("1",), ("2",)), paths=("x.py",))
    with pytest.raises(ValueError, match="row 0 has 2 cells"):
        ActivityTable(("a",), (("1", "2"),))


def test_summary_format_and_other_block_rules():
    with pytest.raises(ValueError, match="summary_format"):
        ActivityPresentation("h", "", summary_format="html")
    with pytest.raises(ValueError, match="stdout or stderr"):
        ActivityTerminalLine("x", stream="stdin")
    with pytest.raises(ValueError, match="at least one stage"):
        ActivityTerminal(())
    with pytest.raises(ValueError, match="non-negative"):
        ActivityTerminal(("ls",), omitted_lines=-1)
    with pytest.raises(ValueError, match="must not be negative"):
        ActivityProgress(-1)
    with pytest.raises(ValueError, match="outcome must be one line"):
        ActivityPresentation("h", "", outcome="a\nb")
    with pytest.raises(ValueError, match="Activity.label must not be blank"):
        Activity(label=" ")
    with pytest.raises(ValueError, match="render must be a callable"):
        Activity(label="Run checks", render="nope")


def test_paths_are_shortened_only_where_people_read_them(tmp_path):
    workspace = tmp_path / "ws"
    home = tmp_path
    presentation = ActivityPresentation(
        f"Read {workspace}/src/a.py",
        f"from {home}/notes.txt and /etc/hosts",
        content=(
            ActivityText(f"see {workspace}/b.py"),
            ActivityHeading(f"{workspace}/pkg"),
            ActivityTable(("file",), ((f"{workspace}/c.py",),), paths=(f"{workspace}/c.py",)),
            ActivityCode(f"open('{workspace}/a.py')", "python"),
            ActivityMarkdown(f"[a]({workspace}/a.py)"),
            ActivityDiff(f"--- {workspace}/a.py"),
        ),
    )
    short = shorten_presentation(presentation, workspace, home)
    assert short.headline == "Read src/a.py"
    assert short.summary == "from ~/notes.txt and /etc/hosts"
    text, heading, table, code, markdown, diff = short.content
    assert text.text == "see b.py" and heading.text == "pkg"
    assert table.rows == (("c.py",),) and table.paths == (f"{workspace}/c.py",)
    assert code == presentation.content[3]
    assert markdown == presentation.content[4]
    assert diff == presentation.content[5]


def test_step_counts_line():
    tags = ["mutation", *["observation"] * 6, "verification", "verification"]
    assert step_counts(tags) == "1 mutation · 6 observations · 2 verifications"
    assert step_counts(tags, short=True) == "1 mutation · 6 observations · 2 ver"
    assert step_counts(["external"]) == "1 external"
    assert step_counts([]) == ""


@pytest.mark.parametrize(
    "where",
    [
        *("headline", "summary", "outcome", "aside", "text", "heading", "cell"),
        *("section", "deeptext", "deepheading", "deepcell"),
    ],
)
def test_a_path_is_shortened_wherever_it_is_read_and_none_means_no_copy(tmp_path, where):
    path = f"{tmp_path}/src/a.py"

    def text(place: str) -> str:
        return f"at {path}" if place == where else "plain words"

    def blocks(prefix: str) -> tuple[object, ...]:
        return (
            ActivityText(text(f"{prefix}text")),
            ActivityHeading(text(f"{prefix}heading")),
            ActivityTable(("file",), ((text(f"{prefix}cell"),),)),
        )

    presentation = ActivityPresentation(
        text("headline"),
        text("summary"),
        content=blocks(""),
        sections=(ActivitySection(text("section"), "s", blocks("deep")),),
        outcome=text("outcome"),
        aside=text("aside"),
    )
    short = shorten_presentation(presentation, tmp_path)
    assert short != presentation and "at src/a.py" in repr(short) and path not in repr(short)
    plain = dataclasses.replace(presentation, **{"headline": "plain words"})
    if where == "headline":
        assert shorten_presentation(plain, tmp_path) is plain  # no path: the same object
