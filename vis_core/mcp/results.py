"""MCP results: the record ``python_execution`` receives, and the text a direct call returns."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

NAME_BYTES = 120  # of a saved resource's own name, after the 9 bytes that make it new
TEXT_LIMIT = 20 * 1024  # characters of text a direct result keeps; the middle is cut


class McpToolError(RuntimeError):
    """The server reported the call as failed (``isError``)."""


@dataclass(frozen=True)
class McpResult:
    """A complete ``tools/call`` result: ``content`` blocks (dicts as the server sent them;
    an image carries ``attachment``, the id ``show_attachment`` takes), ``structured_content``
    and ``is_error``. ``str()`` is the text content, or the structured content as JSON when
    no block gives text (some servers send it alone)."""

    server: str
    tool: str
    content: tuple[dict[str, Any], ...]
    structured_content: Any
    is_error: bool

    @property
    def text(self) -> str:
        text = content_text(self.content)
        if text or self.structured_content is None:
            return text
        return json.dumps(self.structured_content, ensure_ascii=False, default=str)

    def __str__(self) -> str:
        return self.text

    def __vis_activity_failure__(self) -> BaseException | None:
        """A result with ``isError`` resolves in scripts, but its Activity shows failed."""
        if not self.is_error:
            return None
        return McpToolError(self.text or f"{self.tool} reported an error")


def content_text(blocks: Any) -> str:
    parts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "image":
            ref = block.get("attachment")
            parts.append(f"[image {block.get('mimeType', '')}" + (f" {ref}]" if ref else "]"))
        elif kind == "audio":
            parts.append(f"[audio {block.get('mimeType', '')}]")
        elif kind == "resource_link":
            server = block.get("server", "SERVER")
            parts.append(
                f"[resource {block.get('uri')}: read_mcp_resource({server!r}, "
                f"{block.get('uri')!r}) reads it]"
            )
        elif kind == "resource":
            resource = block.get("resource") or {}
            if "text" in resource:
                parts.append(str(resource["text"]))
            else:
                saved = f" saved to {resource['path']}" if "path" in resource else ""
                parts.append(
                    f"[resource {resource.get('uri')} ({resource.get('mimeType')}){saved}]"
                )
    return "\n".join(parts)


def middle_cut(text: str, limit: int = TEXT_LIMIT) -> tuple[str, bool]:
    """``text`` with its middle replaced by ``…N chars truncated…`` when over ``limit``."""
    if len(text) <= limit:
        return text, False
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n…{cut} chars truncated…\n{text[-tail:]}", True


def _new_file(path: Path, data: bytes) -> Path:
    """``data`` in the new private file ``path`` (its folder made private if it is new)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path


def save_text(folder: Path, stem: str, text: str) -> Path:
    return _new_file(folder / f"{stem}-{uuid.uuid4().hex[:8]}.txt", text.encode("utf-8"))


def save_bytes(folder: Path, name: str, data: bytes) -> Path:
    """Save ``data`` in ``folder`` under a new file named after ``name``, a server's text."""
    return _new_file(folder / f"{uuid.uuid4().hex[:8]}-{_file_name(name)}", data)


def _file_name(name: str) -> str:
    """The last part of ``name`` as a file name: printable characters only (no NUL, no
    newline), at most :data:`NAME_BYTES` bytes (a folder's limit is 255 per name)."""
    printable = "".join(c for c in Path(name).name if c.isprintable())
    cut = printable.encode()[:NAME_BYTES].decode(errors="ignore")
    return cut if cut.strip(". ") else "resource.bin"


def decode(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def attach_image(data: bytes, filename: str, media_type: str) -> str | None:
    """Store an image as an attachment of the running block; its id, or None."""
    from vis_core.extension.attachments import attach
    from vis_core.extension.context import calling, current_call

    call = current_call()
    try:
        if call is not None and call.owner != "vis":
            # part of the MCP call's own Activity, not an extension's change shown apart
            with calling(dataclasses.replace(call, owner="vis")):
                return str(attach(data, filename, media_type=media_type, label="MCP")["id"])
        return str(attach(data, filename, media_type=media_type, label="MCP")["id"])
    except Exception as exc:  # a result without its image beats a lost result
        log.warning("could not store an MCP image: %s", exc)
        return None


def record_of(server: str, tool: str, result: Any) -> McpResult:
    """The ``McpResult`` of an SDK ``CallToolResult``; images become attachments."""
    blocks: list[dict[str, Any]] = []
    for index, block in enumerate(result.content or ()):
        data = block.model_dump(by_alias=True, exclude_none=True, mode="json")
        data.pop("_meta", None)
        if data.get("type") == "image":
            raw = decode(str(data.pop("data", "")))
            media = str(data.get("mimeType") or "image/png")
            ext = media.rsplit("/", 1)[-1].split("+")[0] or "png"
            if raw is not None:
                ref = attach_image(raw, f"{server}-{tool}-{index + 1}.{ext}", media)
                if ref:
                    data["attachment"] = ref
        elif data.get("type") == "audio":
            data.pop("data", None)
        elif data.get("type") == "resource_link":
            data["server"] = server  # which server read_mcp_resource asks
        blocks.append(data)
    return McpResult(
        server=server,
        tool=tool,
        content=tuple(blocks),
        structured_content=result.structured_content,
        is_error=bool(result.is_error),
    )


def _saved_blob(block: dict[str, Any], output_dir: Path) -> dict[str, Any]:
    """An embedded resource's bytes saved to a file, the block naming its ``path``; any
    other block as it is."""
    resource = block.get("resource") if block.get("type") == "resource" else None
    if not isinstance(resource, dict) or "blob" not in resource:
        return block
    data = decode(str(resource["blob"]))
    if data is None:  # not base64: said as a resource without its bytes
        return block
    path = save_bytes(output_dir, str(resource.get("uri") or ""), data)
    kept = {k: v for k, v in resource.items() if k != "blob"}
    return {**block, "resource": {**kept, "path": str(path)}}


def direct_text(result: McpResult, output_dir: Path, show: Callable[[str], None]) -> str:
    """What a direct call returns to the model: the text (middle cut past 20 KB, the full
    text saved to a file the result names); images are shown (``show`` an attachment id),
    embedded resources' bytes saved to files it names; ``is_error`` raises."""
    blocks = tuple(_saved_blob(block, output_dir) for block in result.content)
    text = dataclasses.replace(result, content=blocks).text
    if result.is_error:
        raise McpToolError(text or f"{result.tool} reported an error")
    for block in result.content:
        if block.get("type") == "image" and block.get("attachment"):
            show(str(block["attachment"]))
    cut, truncated = middle_cut(text)
    if truncated:
        path = save_text(output_dir, f"mcp-{result.server}-{result.tool}", text)
        cut += f"\n[the full text ({len(text)} chars) is saved in {path}]"
    return cut
