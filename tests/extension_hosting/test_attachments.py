"""``vis.attach`` and the readers: versions, media types, audience, sandbox functions, memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.events import ActivityEnded
from vis_core.extension.attachments import MEMORY, media_type_of
from vis_core.model.activity import ActivityFile, ActivityImage

from .harness import code_turn, install_extension, open_host, run_turn, write_script

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32

CHARTS = '''
import json

import vis_core.extension as vis

PNG = b"\\x89PNG\\r\\n\\x1a\\n" + b"\\x00" * 32


def make() -> str:
    """Attach a chart twice, a table and a report."""
    first = vis.attach(PNG, "plot.png", label="First")
    second = vis.attach(PNG + b"v2", "plot.png", commentable=True)
    table = vis.attach(b"a,b\\n1,2\\n", "totals.csv")
    report = vis.attach(b"%PDF-1.4 report", "report.bin")
    vis.fs.write("out/data.json", "{}")
    from_path = vis.attach("out/data.json")
    return json.dumps({
        "first": first, "second": second, "table": table, "report": report,
        "from_path": from_path,
        "versions": [d["version"] for d in vis.list_attachments("plot.png")],
        "latest": vis.get_attachment("plot.png")["id"],
        "back_one": vis.get_attachment("plot.png", version=-2)["id"],
        "by_id": vis.read_attachment(first["id"]) == PNG,
        "by_descriptor": vis.read_attachment(second) == PNG + b"v2",
        "shown": vis.show_attachment("plot.png")["version"],
    })


vis.register_extension(vis.Extension(
    name="charts", description="Makes charts.", alias="charts", symbols=[vis.Symbol(make)],
))
'''


# 255 bytes, as long as a file's name may be (its stored file has a prefix too)
LONG = "é" * 122 + "reports.csv"


@pytest.fixture
def memory() -> Iterator[None]:
    MEMORY.clear()
    yield
    MEMORY.clear()


async def test_attachments_of_a_block_are_versioned_and_typed(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "charts", CHARTS)
    write_script(
        script_path,
        code_turn(
            "print(await charts.make())",
            f"\n        LONG = {LONG!r}"
            + """
        d = await attach(b"hello", "notes.txt")
        again = await attach(b"hello again", "notes.txt", audience="model")
        data = await read_attachment("notes.txt", version=1)
        long = await attach(b"long", LONG)
        import json
        print(json.dumps({"d": d, "again": again, "data": data.decode(), "long": long,
                          "long_data": (await read_attachment(LONG)).decode(),
                          "all": len(await list_attachments())}))
        """,
        ),
    )
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        session_id = outcome.ended.session_id
        rows = host.store.list_attachments(session_id)
    finally:
        await host.close()

    made = outcome.printed(0)
    first, second = made["first"], made["second"]
    assert set(first) >= {
        "id",
        "filename",
        "version",
        "media_type",
        "kind",
        "size",
        "audience",
        "commentable",
    }
    assert (first["version"], second["version"]) == (1, 2)
    assert (first["media_type"], first["kind"], first["audience"]) == ("image/png", "image", "both")
    assert (first["commentable"], second["commentable"]) == (False, True)
    assert made["versions"] == [1, 2]
    assert made["latest"] == second["id"] and made["back_one"] == first["id"]
    assert made["by_id"] and made["by_descriptor"] and made["shown"] == 2
    assert (made["table"]["media_type"], made["table"]["kind"]) == ("text/csv", "table")
    # the bytes win over the name; a PDF is for the user only
    report = made["report"]
    assert (report["media_type"], report["audience"]) == ("application/pdf", "user")
    assert made["from_path"]["filename"] == "data.json"
    assert made["from_path"]["media_type"] == "application/json"

    sandbox = outcome.printed(1)
    assert sandbox["d"]["version"] == 1 and sandbox["again"]["version"] == 2
    assert sandbox["again"]["audience"] == "model" and sandbox["data"] == "hello"
    # a name that fits a file system's 255 bytes is kept whole; its file's name is cut
    assert sandbox["long"]["filename"] == LONG and sandbox["long_data"] == "long"
    assert sandbox["all"] == 8

    # each extension attach shows as an openable Activity under the tool's own Activity
    ended = [e.activity for e in outcome.events if isinstance(e, ActivityEnded) and e.activity]
    (make_call,) = [a for a in ended if a.tool == "make"]
    shown = [a for a in ended if a.parent_id == make_call.id and a.tool == "attach"]
    assert len(shown) == 5 and all(a.presentation.headline == "Attach file" for a in shown)
    first_shown = shown[0].presentation
    assert first_shown.summary.startswith(f"{first['filename']} · version 1")
    assert isinstance(first_shown.content[0], ActivityImage)
    assert first_shown.content[0].attachment == first["filename"]
    assert any(isinstance(a.presentation.content[0], ActivityFile) for a in shown)
    # the model's own attach() is one Activity, not two
    assert [a.parent_id for a in ended if a.tool == "attach" and a not in shown] == [None] * 3

    # stored durably: rows tied to the python_execution block, bytes under attachments/
    assert len(rows) == 8
    iterations = {block.iteration_id for block in outcome.blocks}
    assert {row.iteration_id for row in rows} <= iterations
    for row in rows:
        path = Path(row.path)
        assert path.is_file() and (vis_home / "attachments" / session_id) in path.parents


def test_outside_vis_attachments_live_in_memory(memory: None, tmp_path: Path) -> None:
    first = vis.attach(b"x,y\n", "t.csv")
    second = vis.attach(b"x,y\n1,2\n", "t.csv", label="More")
    assert [d["version"] for d in vis.list_attachments("t.csv")] == [1, 2]
    assert vis.read_attachment("t.csv") == b"x,y\n1,2\n"
    assert vis.read_attachment("t.csv", version=1) == b"x,y\n"
    assert vis.get_attachment(first)["id"] == first["id"]
    assert vis.get_attachment("t.csv", version=-1) == second
    with pytest.raises(LookupError, match="no attachment 'nope'"):
        vis.get_attachment("nope")
    with pytest.raises(ValueError, match="bytes need a filename"):
        vis.attach(b"data")
    with pytest.raises(ValueError, match="audience"):
        vis.attach(b"data", "a.bin", audience="everyone")


class _Figure:
    """Quacks like a Matplotlib figure: ``savefig(buffer, format=...)``."""

    def savefig(self, buffer: object, format: str) -> None:  # Matplotlib's name
        buffer.write(PNG)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("..", "names no file"),
        ("out/..", "names no file"),
        ("a\0b.txt", "holds a NUL"),  # was: embedded null byte
        ("\udcff.txt", "lone surrogate"),  # a name not UTF-8; was: UnicodeEncodeError
    ],
)
def test_a_filename_that_names_no_file_is_refused_by_name(
    memory: None, name: str, error: str
) -> None:
    """``..`` was kept as an attachment's filename; a NUL or a lone surrogate failed in the
    store with Python's own words, not naming the filename."""
    with pytest.raises(ValueError, match=f"vis.attach\\(\\): .*{error}"):
        vis.attach(b"data", name)
    with pytest.raises(TypeError, match="the filename must be a str, not int"):
        vis.attach(b"data", 7)  # type: ignore[arg-type]
    assert vis.list_attachments() == []
    with pytest.raises(TypeError, match="the filename must be a str, not int"):
        vis.list_attachments(5)  # type: ignore[arg-type]  # was [] (no file is named 5)


def test_figures_become_png_and_types_fall_back_to_the_name(memory: None) -> None:
    figure = vis.attach(_Figure())
    assert (figure["filename"], figure["media_type"]) == ("figure.png", "image/png")
    assert media_type_of(b"plain words", "notes.md") == "text/markdown"
    assert media_type_of(b"<!DOCTYPE html><p>", "page.bin") == "text/html"
    assert media_type_of(b"\x00\x01", "blob") == "application/octet-stream"
    with pytest.raises(ValueError, match="shows images"):
        vis.show_attachment(vis.attach(b"a", "a.txt"))


async def test_without_a_block_attachments_raise(workspace: Path, script_path: Path) -> None:
    from vis_core.extension.context import CallContext, calling

    write_script(script_path, [{"text": "ok"}])
    host = await open_host(workspace, script_path)
    try:
        session = await host.new_session()
        command = CallContext(
            session_id=session.id,
            workspace_root=workspace,
            project_root=workspace,
            owner="charts",
            runtime=host.runtime,
        )
        with calling(command), pytest.raises(RuntimeError, match="python_execution block"):
            vis.attach(b"x", "x.txt")
        with calling(command), pytest.raises(RuntimeError, match="python_execution block"):
            vis.list_attachments()
    finally:
        await host.close()


def test_out_of_scope_handles_say_so() -> None:
    with pytest.raises(RuntimeError, match="no session did"):  # implemented: needs a session
        vis.council.run_session("question")
    with pytest.raises(RuntimeError, match="speech"):
        vis.speech.say("hello")
