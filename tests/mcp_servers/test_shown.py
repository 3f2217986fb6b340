"""What an MCP call's Activity shows of a result a server sent, hostile ones included."""

from __future__ import annotations

from pathlib import Path

from vis_core.mcp.client import ToolInfo
from vis_core.mcp.results import McpResult, direct_text, save_bytes
from vis_core.mcp.tools import mcp_host_tool, shown
from vis_core.model.activity import ActivityCode, ActivityImage, ActivityText


def _result(content: list[dict], structured: object = None) -> McpResult:
    return McpResult("srv", "tool", tuple(content), structured, False)


def test_text_images_and_json_each_show_as_what_they_are() -> None:
    blocks = shown(
        _result(
            [
                {"type": "text", "text": "before"},
                {"type": "image", "mimeType": "image/png", "attachment": "a1"},
                {"type": "text", "text": "after"},
            ],
            {"n": 1},
        )
    )
    assert blocks == (
        ActivityText("before"),
        ActivityImage("a1"),
        ActivityText("after"),
        ActivityCode('{\n  "n": 1\n}', "json"),
    )
    # the same JSON sent as text too is shown once
    assert shown(_result([{"type": "text", "text": '{"n": 1}'}], {"n": 1})) == (
        ActivityCode('{\n  "n": 1\n}', "json"),
    )


def test_a_result_of_structured_content_alone_prints_as_its_json() -> None:
    """A server may send structuredContent with no text block: ``print(result)`` in
    python_execution printed an empty line, so the model read that the tool gave nothing."""
    result = _result([], {"temperature": 21, "sky": "clear ☀"})
    assert str(result) == '{"temperature": 21, "sky": "clear ☀"}'
    assert str(_result([{"type": "text", "text": "21 °C"}], {"temperature": 21})) == "21 °C"
    assert str(_result([])) == ""


def test_text_nested_past_the_json_parser_stays_text() -> None:
    """A server's text of 100,000 '[' beside its structured content: comparing the two raised
    RecursionError out of the Activity's render."""
    deep = "[" * 100_000 + "]" * 100_000
    blocks = shown(_result([{"type": "text", "text": deep}], {"n": 1}))
    assert [type(b) for b in blocks] == [ActivityText, ActivityCode]
    assert len(blocks[0].text) == 20_000  # cut as any long text is


def test_a_resource_saved_under_any_name_a_server_gives(tmp_path: Path) -> None:
    """The file's name comes from the server's URI: too long for the folder, holding a NUL or a
    newline, or only dots, it is still saved, in the folder, whole."""
    folder = tmp_path / "saved"
    for name in ("é" * 200, "a\0b.bin", "line\nbreak.txt", "..", "dir/../../up.bin", ""):
        path = save_bytes(folder, name, b"data")
        assert path.parent == folder and path.read_bytes() == b"data"
        assert len(path.name.encode()) <= 255 and path.name.isprintable()
    names = sorted(p.name[9:] for p in folder.iterdir())
    assert names == sorted(
        ["é" * 60, "ab.bin", "linebreak.txt", "resource.bin", "up.bin", "resource.bin"]
    )


def test_a_direct_calls_embedded_bytes_are_saved_and_named(tmp_path: Path) -> None:
    """A direct call's result with an embedded binary resource told the model only
    '[resource file:///report.pdf (application/pdf)]': the bytes were nowhere it could read."""
    blob = {"uri": "file:///report.pdf", "mimeType": "application/pdf", "blob": "JVBERg=="}
    result = _result(
        [
            {"type": "text", "text": "Here it is."},
            {"type": "resource", "resource": blob},
            {"type": "resource", "resource": {**blob, "blob": "not base64!"}},
        ]
    )
    text = direct_text(result, tmp_path / "mcp", lambda _: None)
    [saved] = (tmp_path / "mcp").iterdir()
    assert saved.read_bytes() == b"%PDF" and saved.name.endswith("-report.pdf")
    assert text.splitlines() == [
        "Here it is.",
        f"[resource file:///report.pdf (application/pdf) saved to {saved}]",
        "[resource file:///report.pdf (application/pdf)]",
    ]


def test_a_call_of_pretty_printed_json_text_says_it_on_one_line() -> None:
    """A server whose text is indented JSON: the row's outcome was its first line, "{"."""
    result = _result([{"type": "text", "text": '{\n  "files": 3,\n  "ok": true\n}'}])
    tool = mcp_host_tool(lambda: None, ToolInfo("srv", "tool", "mcp__srv__tool", "", {}), None)
    assert tool.activity is not None and tool.activity.render is not None
    drawn = tool.activity.render(phase="success", args=(), kwargs={}, result=result, error=None)
    assert drawn is not None and drawn.outcome == '{"files": 3, "ok": true}'
