"""The MCP chapter through ``vis run --json``: a scripted model calls real servers."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import yaml
from warm_servers import command, vis_command

from .conftest import http_entry, stdio_entry, write_config

HOOK = """
import json
from pathlib import Path
import vis_core.extension as vis

LOG = Path(__file__).with_name("mcp-calls.jsonl")

def guard(call):
    payload = call["args"][0]
    with LOG.open("a") as out:
        out.write(json.dumps({"phase": "before", **payload}) + "\\n")
    if payload.get("tool") == "echo" and payload["arguments"].get("text") == "forbidden":
        return vis.block("echo of forbidden text", hint="say something else")

def observe(call):
    with LOG.open("a") as out:
        out.write(json.dumps({"phase": "after", "tool": call["args"][0].get("tool"),
                              "result": call["result"]}, default=str) + "\\n")

vis.register_extension(vis.Extension(
    name="mcpguard",
    description="Watches MCP calls.",
    op_hooks=[vis.OpHook("mcp", guard), vis.OpHook("mcp", observe, phase="after")],
))
"""

BLOCK = """
r = await mcp__fixture__weather(city="Oslo")
print("weather", r.structured_content, r.is_error)
e = await mcp__fixture__fail(reason="x")
print("fail resolved", e.is_error, str(e))
try:
    await mcp__fixture__die_hidden()
except NameError as exc:
    print("hidden:", type(exc).__name__)
hits = [h.name for h in await apropos("mcp__fixture")]
print("hits", len(hits), "mcp__fixture__die" in hits)
print(await doc("mcp__fixture__slow"))
print(await mcp__fixture__slow(steps=2, pause=0.05))
p = await mcp__fixture__picture()
print("image", p.content[0]["type"], bool(p.content[0].get("attachment")))
listed = await list_mcp_resources()
print("uris", sorted(x["uri"] for x in listed["resources"] if x["server"] == "fixture"))
print("servers", sorted({x["server"] for x in listed["resources"]}))
p1 = await list_mcp_resources(server="fixture")
p2 = await list_mcp_resources(server="mcp__fixture", cursor=p1["nextCursor"])
print("pages", len(p1["resources"]), len(p2["resources"]), "nextCursor" in p2)
t = await list_mcp_resource_templates(server="fixture")
print("templates", [x["uriTemplate"] for x in t["resourceTemplates"]])
print("greeting", (await read_mcp_resource("fixture", "greeting://Ada"))["contents"][0]["text"])
blob = await read_mcp_resource("fixture", "file:///blob.bin")
print("blob", open(blob["contents"][0]["path"], "rb").read() == bytes(range(256)))
app = await read_mcp_resource("fixture", "ui://widget")
print("app", app["contents"], app["omitted"])
print("big", len(str(await mcp__fixture__big(size=30000))))
try:
    await mcp__fixture__echo(text="forbidden")
except Exception as exc:
    print("blocked:", exc)
print("deferred", await doc("mcp__later__echo") != "")
try:
    await mcp__missing__anything()
except NameError as exc:
    print("missing:", type(exc).__name__)
"""


def _vis_run(
    home: Path, workspace: Path, script: list[dict[str, Any]], *flags: str
) -> subprocess.CompletedProcess[str]:
    """``vis run FLAGS go`` in ``workspace``, the model scripted by ``script``."""
    path = workspace / "script.yaml"
    path.write_text(yaml.safe_dump(script), encoding="utf-8")
    return subprocess.run(
        [*vis_command(), "run", "--provider", "scripted", "--script",
         str(path), *flags, "go"],
        cwd=workspace, env={**os.environ, "VIS_HOME": str(home)}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip


def _run(home: Path, workspace: Path, script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = _vis_run(home, workspace, script, "--json")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events, done.stderr
    return events


async def _run_here(workspace: Path, script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of one scripted turn on a Host in this process, in ``vis run --json``'s
    form: for the tests where ``vis run`` is not the point, without a process's imports of
    Vis and the MCP SDK (~1 s of CPU)."""
    from vis_core.host import Host, HostOptions

    path = workspace / "script.yaml"
    path.write_text(yaml.safe_dump(script), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=path))
    try:
        session = await host.new_session()
        events: list[Any] = []
        session.subscribe(events.append)
        await session.submit("go")
    finally:
        await host.close()
    return [json.loads(event.to_json()) for event in events]


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_the_mcp_chapter_through_vis_run(vis_home: Path, workspace: Path, http_server: str) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "mcpguard.py").write_text(textwrap.dedent(HOOK))
    write_config(
        vis_home / "mcp.json",
        {
            "fixture": stdio_entry(
                env={"DELAY": "1"},  # slow to start: the block naming it waits for it
                toolExposure={
                    "echo": "direct",
                    "die": "hidden",
                    "big": "direct",
                    "picture": "direct",
                    "fail": "direct",
                },
                description="Weather, pictures and notes",
            ),
            "later": http_entry(http_server, exposure="deferred"),
            "broken": {"type": "sse", "url": "http://localhost/sse"},
            "missing": {"command": "no-such-command-for-vis"},
        },
    )
    script = [
        {"code": BLOCK},
        {"tool": {"name": "mcp__fixture__echo", "arguments": {"text": "hello direct"}}},
        {"tool": {"name": "mcp__fixture__big", "arguments": {"size": 30000}}},
        {"tool": {"name": "mcp__later__echo", "arguments": {"text": "loaded by doc"}}},
        {"tool": {"name": "mcp__fixture__picture", "arguments": {}}},
        {"tool": {"name": "mcp__fixture__fail", "arguments": {"reason": "on purpose"}}},
        {"text": "done"},
    ]
    events = _run(vis_home, workspace, script)
    assert _of(events, "TurnEnded")[-1]["status"] == "completed"
    notes = [n["text"] for n in _of(events, "Notification")]
    assert sum("server 'broken'" in n and "/mcp instead of /sse" in n for n in notes) == 1
    # a failed connection is told once, in the turn that is running when it fails
    failed = [n for n in notes if n.startswith("MCP server 'missing' failed")]
    assert len(failed) == 1 and "'no-such-command-for-vis': no such command" in failed[0]
    blocks = _of(events, "BlockFinished")
    out = blocks[0]["stdout"]
    assert "weather {'city': 'Oslo', 'celsius': 21.5} False" in out
    assert "fail resolved True" in out
    assert "hidden: NameError" in out
    assert "hits 9 False" in out  # the hidden tool is not listed
    assert "mcp__fixture__slow(*, steps: int, pause: float = 0.3)" in out
    assert "done after 2 steps" in out
    assert "image image True" in out
    assert "uris ['file:///blob.bin', 'file:///notes.txt', 'file:///pixel.png']" in out
    assert "servers ['fixture', 'later']" in out  # every server, ui:// apps left out
    assert "templates ['greeting://{name}']" in out and "greeting Hello, Ada!" in out
    assert "blob True" in out
    assert "app [] 1 part(s) of this resource are MCP App views" in out  # said, not just empty
    assert "big 30000" in out  # python_execution gets the complete result
    assert "mcp was blocked by extension 'mcpguard': echo of forbidden text" in out
    assert "deferred True" in out
    assert "missing: NameError" in out
    # direct calls: text, the 20 KB middle cut with the full text in a file, a deferred tool
    assert blocks[1]["stdout"] == "hello direct" and blocks[1]["error"] is None
    big = blocks[2]["stdout"]
    assert "…9520 chars truncated…" in big and len(big) < 21000
    saved = big.rsplit("saved in ", 1)[1].rstrip("]")
    assert len(Path(saved).read_text()) == 30000
    assert blocks[3]["stdout"] == "loaded by doc"
    assert blocks[4]["error"] is None and len(blocks[4]["images"]) == 1  # shown to the model
    assert blocks[5]["error"].startswith("McpToolError: ")  # isError: a failed direct call
    assert "pages 2 1 False" in out  # one page of a server, then the next with its cursor
    # each call is an Activity; isError ends it failed
    ended = {a["activity"]["tool"]: a["activity"] for a in _of(events, "ActivityEnded")}
    assert ended["mcp__fixture__fail"]["state"] == "failed"
    assert ended["mcp__fixture__weather"]["state"] == "succeeded"
    weather = ended["mcp__fixture__weather"]["presentation"]
    assert weather["headline"] == "MCP fixture · weather" and weather["summary"] == "city=Oslo"
    # its structured result is shown as JSON, once (the server sent the same JSON as text)
    assert [(b["kind"], b.get("language")) for b in weather["content"]] == [
        ("ActivityCode", "json")
    ]
    assert json.loads(weather["content"][0]["code"]) == {"city": "Oslo", "celsius": 21.5}
    picture = ended["mcp__fixture__picture"]["presentation"]["content"]
    assert [b["kind"] for b in picture] == ["ActivityImage"]  # the stored image, not its name
    assert picture[0]["attachment"] == blocks[4]["images"][0]
    assert ended["read_mcp_resource"]["state"] == "succeeded"
    # op hooks saw op "mcp" with the server's annotations
    calls = [json.loads(line) for line in (vis_home / "extensions" / "mcp-calls.jsonl").open()]
    weather_call = next(c for c in calls if c.get("tool") == "weather" and c["phase"] == "before")
    assert weather_call["server"] == "fixture" and weather_call["annotations"]["readOnlyHint"]
    fail_call = next(c for c in calls if c.get("tool") == "fail" and c["phase"] == "before")
    assert fail_call["annotations"]["destructiveHint"] is True
    assert any(c["phase"] == "after" and c["tool"] == "weather" for c in calls)


EXTENSION = '''
import vis_core.extension as vis

PROGRAM, *ARGS = {command!r}

def add_late() -> str:
    """Register the late server."""
    vis.mcp_server("late", {{"url": {url!r}}})
    return "registered"

vis.register_extension(vis.Extension(
    name="servers",
    description="Adds MCP servers.",
    alias="servers",
    symbols=[vis.Symbol(add_late)],
    mcp_servers=[
        vis.mcp_server("declared", {{"command": PROGRAM, "args": ARGS}}),
        vis.mcp_server("shadowed", {{"command": "never-run"}}),
    ],
))
'''


async def test_extensions_add_servers_and_a_file_entry_wins(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """The declared server runs over stdio, the file's entry and the late one over HTTP (a
    stdio server registered at run time: the next test)."""
    from .conftest import SERVER

    (vis_home / "extensions").mkdir()
    url = http_entry(http_server)["url"]
    (vis_home / "extensions" / "servers.py").write_text(
        textwrap.dedent(EXTENSION.format(command=command(SERVER, "stdio"), url=url))
    )
    write_config(vis_home / "mcp.json", {"shadowed": http_entry(http_server)})
    script = [
        {"code": 'print(await mcp__declared__echo(text="from the extension"))\n'
                 'print(await mcp__shadowed__echo(text="from the file"))\n'
                 "print(await servers.add_late())"},
        {"code": 'print(await mcp__late__echo(text="registered at run time"))'},
        {"text": "done"},
    ]  # fmt: skip
    events = await _run_here(workspace, script)
    blocks = _of(events, "BlockFinished")
    assert blocks[0]["stdout"].splitlines() == [
        "from the extension",
        "from the file",
        "registered",
    ], blocks[0]["error"]
    assert blocks[1]["stdout"].strip() == "registered at run time", blocks[1]["error"]


LATE_ONLY = '''
import vis_core.extension as vis

PROGRAM, *ARGS = {command!r}

def add_late() -> str:
    """Register the late server."""
    vis.mcp_server("late", {{"command": PROGRAM, "args": ARGS}})
    return "registered"

vis.register_extension(vis.Extension(
    name="servers",
    description="Adds an MCP server while it runs.",
    alias="servers",
    symbols=[vis.Symbol(add_late)],
))
'''


async def test_a_server_registered_at_run_time_works_without_any_config(
    vis_home: Path, workspace: Path
) -> None:
    """No mcp.json and no declared server: Vis makes no MCP manager at start; the first
    server an extension registers makes it, connected for the next block."""
    from .conftest import SERVER

    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "servers.py").write_text(
        textwrap.dedent(LATE_ONLY.format(command=command(SERVER, "stdio")))
    )
    script = [
        {"code": "print(await servers.add_late())"},
        {"code": 'print(await mcp__late__echo(text="registered at run time"))'},
        {"text": "done"},
    ]
    blocks = _of(await _run_here(workspace, script), "BlockFinished")
    assert blocks[0]["stdout"].strip() == "registered", blocks[0]["error"]
    assert blocks[1]["stdout"].strip() == "registered at run time", blocks[1]["error"]


AT_LOAD = """
import vis_core.extension as vis

PROGRAM, *ARGS = {command!r}
vis.mcp_server("extdemo", {{"command": PROGRAM, "args": ARGS}})
vis.register_extension(vis.Extension(name="mcpext", description="Adds an MCP server."))
"""


async def test_a_server_an_entry_file_adds_with_vis_mcp_server_connects(
    vis_home: Path, workspace: Path
) -> None:
    """The README's ``vis.mcp_server(name, config)`` in an entry file, its result not put in
    ``Extension(mcp_servers=...)``: the session had no such server and nothing said why."""
    from .conftest import SERVER

    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "mcpext.py").write_text(
        textwrap.dedent(AT_LOAD.format(command=command(SERVER, "stdio")))
    )
    script = [{"code": 'print(await mcp__extdemo__echo(text="added at load"))'}, {"text": "ok"}]
    blocks = _of(await _run_here(workspace, script), "BlockFinished")
    assert blocks[0]["stdout"].strip() == "added at load", blocks[0]["error"]


async def test_two_servers_whose_tool_names_meet_are_both_callable(
    vis_home: Path, workspace: Path
) -> None:
    """Server ``a``'s tool ``b__c`` and server ``a__b``'s tool ``c`` are both ``mcp__a__b__c``:
    every turn failed with "tool 'mcp__a__b__c' is already registered by 'mcp'". Both now get
    the hash suffix of their own name, as the colliding tools of one server do, and the block
    naming them waits for both servers."""
    write_config(
        vis_home / "mcp.json",
        {
            "a": stdio_entry(env={"EXTRA_TOOL": "b__c"}),
            "a__b": stdio_entry(env={"EXTRA_TOOL": "c"}),
        },
    )
    first = "mcp__a__b__c_" + hashlib.sha256(b"b__c").hexdigest()[:6]
    second = "mcp__a__b__c_" + hashlib.sha256(b"c").hexdigest()[:6]
    script = [
        {"code": f"print(await {first}(), await {second}())"},
        {"code": "print(await mcp__a__echo(text='again'))"},
        {"text": "ok"},
    ]
    events = await _run_here(workspace, script)
    blocks = _of(events, "BlockFinished")
    assert blocks[0]["stdout"].strip() == "b__c c", blocks[0]["error"]
    assert blocks[1]["stdout"].strip() == "again", blocks[1]["error"]
    assert _of(events, "TurnEnded")[-1]["status"] == "completed"


async def test_a_block_calling_a_failed_servers_tool_is_told_why_it_is_missing(
    vis_home: Path, workspace: Path
) -> None:
    """A server that exited at the start has no tools: a block calling one got a bare
    NameError, while the prompt still listed the server, and the model could not tell a typo
    from a server that failed."""
    crashing = {"command": "sh", "args": ["-c", "echo missing FOO >&2; exit 3"]}
    write_config(vis_home / "mcp.json", {"crashstart": crashing})
    script = [{"code": 'await mcp__crashstart__echo(text="x")'}, {"text": "ok"}]
    [block] = _of(await _run_here(workspace, script), "BlockFinished")
    error = block["error"]
    assert "NameError: name 'mcp__crashstart__echo' is not defined" in error, error
    assert error.endswith(
        "MCP server 'crashstart' failed: the server process ended before it answered "
        "initialize; its tools are defined once it connects (a block that names it tries "
        "again)"
    ), error


def test_vis_run_says_why_a_call_failed(vis_home: Path, workspace: Path, http_server: str) -> None:
    """vis run printed '✗ MCP fixture · fail · reason=x' with no reason (the reason was only in
    the outcome, which its line does not show when it has a summary), and nothing at all for
    a direct call of a tool that does not exist, whose answers then ran together on one line."""
    write_config(vis_home / "mcp.json", {"fixture": http_entry(http_server)})
    script = [
        {"text": "Failing.", "code": 'await mcp__fixture__fail(reason="disk full")'},
        {"text": "Calling directly.", "tool": {"name": "no_such_tool", "arguments": {}}},
        {"text": "Done."},
    ]
    done = _vis_run(vis_home, workspace, script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    failed = next(line for line in lines if line.startswith("✗ MCP fixture · fail"))
    assert failed == "✗ MCP fixture · fail · reason=disk full · Error executing tool fail", lines
    at = lines.index("Calling directly.")
    assert lines[at + 1] == "✗ no_such_tool · no direct tool named 'no_such_tool'", lines
    assert lines[at + 2] == "Done.", lines


DEEP_SERVER = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}, "resources": {}},
                  "serverInfo": {"name": "deep", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "deep", "inputSchema": {"type": "object"}}]}
    elif method == "resources/read" and msg["params"]["uri"] == "file:///silent":
        continue  # never answered
    elif method in ("tools/call", "resources/read"):  # nested past what the SDK's parser reads
        nested = "[" * 5000 + "]" * 5000
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"content":[],'
                         '"structuredContent":{"a":%s}}}\\n' % (json.dumps(mid), nested))
        sys.stdout.flush()
        continue
    elif mid is None:
        continue
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\\n")
    sys.stdout.flush()
"""


def test_an_answer_vis_cannot_read_fails_the_call_at_once(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """A server whose answer is nested too deeply for the SDK to read: the SDK dropped it, so
    the call waited out the server's whole timeout (an hour, if the person set one) and then
    said the server 'sent nothing'. The call now fails as the unreadable line arrives, and
    says why."""
    server = tmp_path / "deep_server.py"
    server.write_text(DEEP_SERVER, encoding="utf-8")
    entry = {"command": sys.executable, "args": [str(server)], "timeout": 3600}
    write_config(vis_home / "mcp.json", {"deep": entry})
    script = [{"text": "Calling.", "code": "await mcp__deep__deep()"}, {"text": "Done."}]
    done = _vis_run(vis_home, workspace, script)
    assert done.returncode == 0, done.stderr
    failed = next(line for line in done.stdout.splitlines() if line.startswith("✗ MCP deep"))
    assert "sent a message Vis cannot read while running 'deep'" in failed, done.stdout
    assert "recursion limit exceeded" in failed and "[type=" not in failed
    assert "Done." in done.stdout  # the turn went on


def test_a_resource_read_fails_on_an_unreadable_answer_or_after_the_timeout(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Reading a resource waited on, forever: for an answer the SDK dropped as unreadable, and
    for a server that never answers. It now fails as the unreadable line arrives, and after
    the server's 'timeout' setting of silence, as a tool call does."""
    server = tmp_path / "deep_server.py"
    server.write_text(DEEP_SERVER, encoding="utf-8")
    entry = {"command": sys.executable, "args": [str(server)]}
    write_config(
        vis_home / "mcp.json", {"deep": {**entry, "timeout": 3600}, "slow": {**entry, "timeout": 1}}
    )
    code = """
for server, uri in (("deep", "file:///deep"), ("slow", "file:///silent")):
    try:
        await read_mcp_resource(server, uri)
    except Exception as exc:
        print("failed:", exc)
"""
    script = [{"text": "Reading.", "code": code}, {"text": "Done."}]
    done = _vis_run(vis_home, workspace, script)
    assert done.returncode == 0, done.stderr
    lines = [line.removeprefix("  │ ") for line in done.stdout.splitlines()]
    failed = [line for line in lines if line.startswith("failed:")]
    assert len(failed) == 2, done.stdout
    assert "'deep' sent a message Vis cannot read while reading 'file:///deep'" in failed[0]
    assert "recursion limit exceeded" in failed[0]
    assert failed[1].endswith(
        "'slow' sent nothing for 1 s while reading 'file:///silent' (its 'timeout' setting)"
    ), failed[1]
    rows = [line for line in lines if line.startswith("✗ MCP resource")]
    assert len(rows) == 2 and rows[0].count("cannot read") == 1, rows  # said once
