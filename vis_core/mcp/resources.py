"""``list_mcp_resources``, ``list_mcp_resource_templates`` and ``read_mcp_resource``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.mcp.results import attach_image, decode, save_bytes
from vis_core.mcp.tools import _hooked, arguments_summary
from vis_core.model.activity import Activity, ActivityPresentation, RenderPhase, SymbolTag
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.extension_host.tool_hooks import ToolHooks
    from vis_core.mcp.client import ServerConnection

APP_MIME = "text/html;profile=mcp-app"
READ_ONLY = {"readOnlyHint": True}
Servers = Callable[[], Awaitable[list["ServerConnection"]]]


def is_app(item: dict[str, Any]) -> bool:
    """MCP Apps resources (``ui://`` or the app media type) are not for Vis to render."""
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    media = str(item.get("mimeType") or "").replace(" ", "").lower()
    return uri.startswith("ui://") or media == APP_MIME


def _clean(server: str, item: Any) -> dict[str, Any]:
    data = item.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("icons", None)
    data.pop("_meta", None)
    return {"server": server, **data}


def _pick(connections: list[ServerConnection], server: str) -> ServerConnection:
    from vis_core.mcp.config import server_key

    key = server_key(server.removeprefix("mcp__"))
    for conn in connections:
        if conn.config.key == key:
            return conn
    names = ", ".join(c.name for c in connections) or "none"
    raise LookupError(
        f"no MCP server {server!r} offers resources (servers with resources: {names})"
    )


def _render(label: str) -> Callable[..., ActivityPresentation | None]:
    def render(
        *, phase: str, args: Any, kwargs: dict[str, Any], result: Any, error: Any
    ) -> ActivityPresentation | None:
        summary = arguments_summary(kwargs)
        if phase == RenderPhase.FAILURE:  # the row says the error itself, once
            return ActivityPresentation(label, summary)
        if phase == RenderPhase.SUCCESS and isinstance(result, dict):
            for key in ("resources", "resourceTemplates", "contents"):
                if key in result:
                    count = len(result[key])
                    return ActivityPresentation(label, summary, outcome=f"{count} {key}")
        return ActivityPresentation(label, summary)

    return render


def resource_tools(servers: Servers, hooks: ToolHooks | None, output_dir: Path) -> list[HostTool]:
    """The three resource tools over the session's connected servers with resources."""

    def hooked(payload: dict[str, Any], run: Callable[[], Awaitable[Any]]) -> Awaitable[Any]:
        """A call between the ``mcp`` op hooks, whose payload says it only reads."""
        return _hooked(hooks, {**payload, "annotations": READ_ONLY}, run)

    async def listing(templates: bool, server: str | None, cursor: str | None) -> dict[str, Any]:
        connections = await servers()
        key = "resourceTemplates" if templates else "resources"

        def items(conn: ServerConnection, result: Any) -> list[dict[str, Any]]:
            raw = result.resource_templates if templates else result.resources
            return [d for d in (_clean(conn.name, r) for r in raw) if not is_app(d)]

        if server is not None:
            conn = _pick(connections, server)
            result = await conn.list_resources(cursor, templates=templates)
            out: dict[str, Any] = {"server": conn.name, key: items(conn, result)}
            if result.next_cursor:
                out["nextCursor"] = result.next_cursor
            return out
        everything: list[dict[str, Any]] = []
        for conn in connections:
            at: str | None = None
            while True:
                result = await conn.list_resources(at, templates=templates)
                everything.extend(items(conn, result))
                at = result.next_cursor
                if not at:
                    break
        return {key: everything}

    async def list_mcp_resources(
        server: str | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        """List MCP resources as {server?, resources: [{server, uri, name, ...}], nextCursor?}.

        With `server`, one page of that server (`cursor` continues with the next page);
        without it, every resource of every server. Read one with read_mcp_resource.
        """
        payload = {"tool": "list_mcp_resources", "server": server, "cursor": cursor}
        return await hooked(payload, lambda: listing(False, server, cursor))

    async def list_mcp_resource_templates(
        server: str | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        """List URI templates for resources the MCP servers do not list directly.

        Returns {server?, resourceTemplates: [{server, uriTemplate, name, ...}], nextCursor?};
        fill a template in and read it with read_mcp_resource.
        """
        payload = {"tool": "list_mcp_resource_templates", "server": server, "cursor": cursor}
        return await hooked(payload, lambda: listing(True, server, cursor))

    async def read_mcp_resource(server: str, uri: str) -> dict[str, Any]:
        """Read an MCP resource by `server` and `uri`: {server, uri, contents}.

        Text comes back as `text`; an image as `attachment` (pass it to show_attachment to
        see it); any other binary is saved to a file whose `path` is given. Parts that are MCP
        App views are left out, as `omitted` says.
        """

        async def run() -> dict[str, Any]:
            conn = _pick(await servers(), server)
            result = await conn.read_resource(uri)
            contents: list[dict[str, Any]] = []
            apps = 0
            for index, item in enumerate(result.contents):
                data = item.model_dump(by_alias=True, exclude_none=True, mode="json")
                data.pop("_meta", None)
                if is_app(data):
                    apps += 1
                    continue
                if "blob" in data:
                    raw = decode(str(data.pop("blob")))
                    media = str(data.get("mimeType") or "application/octet-stream")
                    name = Path(str(data.get("uri", "")).rstrip("/")).name or f"resource{index}"
                    if raw is None:
                        data["error"] = "the server sent a blob that is not valid base64"
                    elif media.startswith("image/"):
                        ref = attach_image(raw, name, media)
                        if ref:
                            data["attachment"] = ref
                        else:
                            data["path"] = str(save_bytes(output_dir, name, raw))
                    else:
                        data["path"] = str(save_bytes(output_dir, name, raw))
                contents.append(data)
            read = {"server": conn.name, "uri": uri, "contents": contents}
            if apps:  # said, or the model takes an empty answer for an empty resource
                read["omitted"] = (
                    f"{apps} part(s) of this resource are MCP App views (ui://, {APP_MIME}), "
                    "which Vis does not show; they were left out"
                )
            return read

        payload = {"tool": "read_mcp_resource", "server": server, "uri": uri}
        return await hooked(payload, run)

    return [
        HostTool(
            fn.__name__,
            fn,
            SymbolTag.OBSERVATION,
            Activity(label, render=_render(label)),
            owner="mcp",
        )
        for fn, label in (
            (list_mcp_resources, "MCP resources"),
            (list_mcp_resource_templates, "MCP resource templates"),
            (read_mcp_resource, "MCP resource"),
        )
    ]
