"""An ACP prompt (text, resource links, embedded resources, images) as a Vis request."""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from vis_core.acp.markdown import fenced
from vis_core.model.images import IMAGE_TYPES, ImageRefused, PersonImage, checked_image


@dataclass
class Request:
    """What one prompt asks: the text, the workspace files whose ``cat`` view goes with it
    (``@path``, images among them) and pasted images."""

    text: str = ""
    mentions: list[str] = field(default_factory=list)
    images: list[PersonImage] = field(default_factory=list)


def file_path(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (or a plain absolute path), else None."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if not parsed.scheme and uri.startswith("/"):
        return Path(uri)
    return None


def _inside(path: Path, workspace: Path) -> str | None:
    """``path`` relative to ``workspace`` when it lies inside it (as written: the cat that
    reads it checks links and the jail itself)."""
    normal = Path(os.path.normpath(path))
    try:
        return normal.relative_to(workspace).as_posix()
    except ValueError:
        return None


def _image_name(block: ImageContentBlock, number: int) -> str:
    path = file_path(block.uri) if block.uri else None
    if path is not None and path.name:
        return path.name
    known = IMAGE_TYPES.get(block.mime_type)
    suffix = known[1][0] if known else ".png"
    return f"image-{number}{suffix}"


def read_prompt(blocks: Sequence[Any], workspace: Path) -> Request:
    """The request ``blocks`` make. A link to a workspace file becomes an ``@path`` mention
    (its ``cat`` view, or the image, goes with the request); a link elsewhere is named in
    the text only (Vis reads no file outside the workspace for a link); an embedded text
    resource is quoted; an image is checked as a pasted one (:class:`ImageRefused`)."""
    request = Request()
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            path = file_path(block.uri)
            inside = _inside(path, workspace) if path is not None else None
            if inside is not None:
                request.mentions.append(inside)
                parts.append(f'@"{inside}"' if " " in inside else f"@{inside}")
            else:
                parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"[the person attached {resource.uri}]\n{fenced(resource.text)}")
            else:
                parts.append(
                    f"[the person attached {resource.uri} ({resource.mime_type}), not text]"
                )
        elif isinstance(block, ImageContentBlock):
            name = _image_name(block, len(request.images) + 1)
            try:
                data = base64.b64decode(block.data, validate=True)
            except (binascii.Error, ValueError):
                raise ImageRefused(f"{name}: its data is not base64; attach it again") from None
            request.images.append(checked_image(name, data))
    request.text = "\n".join(part for part in parts if part)
    return request
