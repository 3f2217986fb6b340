"""MCP tools and the resource tools as host tools: each call an Activity through op hooks."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from vis_core.mcp.client import ServerConnection, ToolInfo
from vis_core.mcp.results import McpResult, content_text, record_of
from vis_core.mcp.signature import schema_signature, tool_doc
from vis_core.model.activity import (
    Activity,
    ActivityCode,
    ActivityImage,
    ActivityPresentation,
    ActivityText,
    RenderPhase,
    SymbolTag,
)
from vis_core.text_limits import one_line
from vis_core.tools.display import plural
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.extension_host.tool_hooks import ToolHooks

OP = "mcp"
SUMMARY_LIMIT = 120
SHOWN_LIMIT = 20_000  # characters of one text or JSON block an Activity shows


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return one_line(text, limit)


def arguments_summary(arguments: dict[str, Any]) -> str:
    text = ", ".join(f"{key}={_short(value)}" for key, value in arguments.items())
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


def _render(server: str, tool: str) -> Callable[..., ActivityPresentation | None]:
    headline = f"MCP {server} · {tool}"

    def render(
        *, phase: str, args: Any, kwargs: dict[str, Any], result: Any, error: Any
    ) -> ActivityPresentation | None:
        summary = arguments_summary(kwargs)
        if phase in (RenderPhase.START, RenderPhase.FAILURE):  # a failure: the row says it
            return ActivityPresentation(headline, summary)
        if isinstance(result, McpResult):
            content = shown(result)
            outcome = _outcome(result, content)
            if result.is_error:
                outcome = f"error: {outcome}"
            return ActivityPresentation(headline, summary, content, outcome=outcome)
        if isinstance(result, dict):
            return ActivityPresentation(headline, summary, outcome=_short(result, 100))
        return None

    return render


def shown(result: McpResult) -> tuple[Any, ...]:
    """What a call's Activity shows of its result: text as text, each stored image as an
    image, structured content as JSON (instead of the text when that text is the same JSON)."""
    blocks: list[Any] = []
    texts: list[dict[str, Any]] = []

    def add_texts() -> None:
        text = content_text(texts)
        if text.strip():
            blocks.append(ActivityText(text[:SHOWN_LIMIT]))
        texts.clear()

    for block in result.content:
        if block.get("type") == "image" and block.get("attachment"):
            add_texts()
            blocks.append(ActivityImage(str(block["attachment"])))
        else:
            texts.append(block)
    add_texts()
    structured = result.structured_content
    if structured is None:
        return tuple(blocks)
    if _same_json(result.text, structured):
        blocks = [b for b in blocks if not isinstance(b, ActivityText)]
    pretty = json.dumps(structured, indent=2, ensure_ascii=False, default=str)
    blocks.append(ActivityCode(pretty[:SHOWN_LIMIT], "json"))
    return tuple(blocks)


def _outcome(result: McpResult, content: tuple[Any, ...]) -> str:
    """The result in a line: its first line of text (JSON text on one line), else its
    images, else its JSON."""
    text = next((b.text for b in content if isinstance(b, ActivityText)), "").strip()
    if text[:1] in ("{", "[") and "\n" in text:  # pretty-printed: its first line is "{"
        with contextlib.suppress(ValueError, RecursionError):
            return _short(json.loads(text), 100)
    if text:
        return _short(text.splitlines()[0], 100)
    images = sum(isinstance(b, ActivityImage) for b in content)
    if images:
        return plural(images, "image")
    if result.structured_content is not None:
        return _short(result.structured_content, 100)
    return "no content"


def _same_json(text: str, value: Any) -> bool:
    """Whether ``text`` is ``value`` serialized (servers send structured results both ways)."""
    try:
        return json.loads(text) == value
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
        return False


async def _hooked(
    hooks: ToolHooks | None,
    payload: dict[str, Any],
    run: Callable[[], Awaitable[Any]],
) -> Any:
    """Run a call between the ``mcp`` op hooks: guards may refuse it, observers see it."""
    from vis_core.extension.hooks import OperationBlocked
    from vis_core.extension_host.tool_hooks import plain_result

    if hooks is None:
        return await run()
    args = [payload]
    try:
        await hooks.hooks.run_before(OP, args)
    except OperationBlocked:
        await hooks.hooks.run_after(OP, args, None)
        raise
    try:
        result = await run()
    except Exception as exc:
        await hooks.hooks.run_after(OP, args, {"error": f"{type(exc).__name__}: {exc}"})
        raise
    await hooks.hooks.run_after(OP, args, plain_result(result))
    return result


def tool_function(
    connection: Callable[[], ServerConnection | None],
    info: ToolInfo,
    hooks: ToolHooks | None,
) -> Callable[..., Awaitable[McpResult]]:
    """The awaitable the sandbox calls for one MCP tool (keyword arguments)."""

    async def call(**arguments: Any) -> McpResult:
        conn = connection()
        if conn is None:
            raise LookupError(f"MCP server {info.server!r} is no longer configured")
        if (
            len(arguments) == 1
            and "arguments" in arguments
            and isinstance(arguments["arguments"], dict)
            and "arguments" not in (info.input_schema.get("properties") or {})
        ):
            arguments = dict(arguments["arguments"])
        payload = {
            "server": info.server,
            "tool": info.tool,
            "arguments": arguments,
            "annotations": dict(info.annotations),
        }

        async def run() -> McpResult:
            headline = f"MCP {info.server} · {info.tool}"
            progress = _progress(headline, arguments_summary(arguments))
            raw = await conn.call_tool(info.tool, arguments, progress)
            return record_of(info.server, info.tool, raw)

        return await _hooked(hooks, payload, run)

    call.__name__ = call.__qualname__ = info.name
    call.__doc__ = tool_doc(info.description, info.input_schema, info.server, info.tool)
    call.__signature__ = schema_signature(info.input_schema)  # type: ignore[attr-defined]
    return call


def _progress(headline: str, summary: str) -> Callable[[float, float | None, str | None], None]:
    """Progress notifications update the running Activity's summary."""
    from vis_core.extension.context import current_call

    call = current_call()
    publish = getattr(call, "publish", None) if call is not None else None

    def report(value: float, total: float | None, message: str | None) -> None:
        if publish is None:
            return
        amount = f"{value:g}/{total:g}" if total else f"{value:g}"
        text = f"progress {amount}" + (f": {message}" if message else "")
        with contextlib.suppress(Exception):  # progress is decoration; the call goes on
            publish(ActivityPresentation(headline, summary, outcome=_short(text, 100)))

    return report


def tag_of(info: ToolInfo) -> SymbolTag:
    if info.annotations.get("readOnlyHint"):
        return SymbolTag.OBSERVATION
    if info.annotations.get("openWorldHint"):
        return SymbolTag.EXTERNAL
    return SymbolTag.MUTATION


def mcp_host_tool(
    connection: Callable[[], ServerConnection | None], info: ToolInfo, hooks: ToolHooks | None
) -> HostTool:
    return HostTool(
        name=info.name,
        fn=tool_function(connection, info, hooks),
        tag=tag_of(info),
        activity=Activity(f"MCP {info.server}", render=_render(info.server, info.tool)),
        owner="mcp",
    )
