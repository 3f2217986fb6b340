"""Images the person attaches to a request: ``@shot.png`` read beneath the workspace, pasted
or clipboard images, kept as session attachments and announced as ``ImageAttached``."""

from __future__ import annotations

import asyncio
import errno
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.events import ImageAttached
from vis_core.model.images import (
    MAX_SOURCE_BYTES,
    ImageRefused,
    PersonImage,
    checked_image,
    is_image_name,
)
from vis_core.paths import VisPaths, write_private
from vis_core.tools.beneath import Beneath, Escape
from vis_core.tools.context import hidden_folders

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession

# @ at the start or after a space, then a quoted path or a bare one (as the TUI writes them)
_MENTION = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|([^\s@"]+))')
_TRAILING = ",.;:!?)]}'\""


def image_mentions(text: str) -> list[str]:
    """The ``@path`` mentions of ``text`` whose names claim an image (``@shot.png``,
    ``@"my shot.png"``), in order, once each; a trailing full stop is not part of a path."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        path = quoted if quoted is not None else bare.rstrip(_TRAILING)
        if path and is_image_name(path) and path not in found:
            found.append(path)
    return found


def read_workspace_image(workspace: Path, path: str) -> PersonImage:
    """The image at ``path`` (relative to ``workspace``, or absolute inside it), read beneath
    the workspace whatever the jail says: a link leading out and Vis's own folders are
    refused, like the jail's tools refuse them. Checked by :func:`checked_image`."""
    files = Beneath(workspace, tuple(hidden_folders()))
    shown = f"@{path}"
    try:
        data = files.read_bytes(path, MAX_SOURCE_BYTES + 1)
    except Escape as exc:
        raise ImageRefused(
            f"{shown} leads out of the workspace {workspace} ({exc.strerror or exc}); "
            "an @ image must be a file inside it. Paste the file's path to attach it."
        ) from None
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise ImageRefused(f"{shown}: no such file in the workspace {workspace}") from None
        raise ImageRefused(f"{shown} could not be read: {exc.strerror or exc}") from None
    return checked_image(os.path.basename(path), data)


async def attach_images(
    session: AgentSession, store: Any, turn_id: str, images: Sequence[PersonImage]
) -> None:
    """Keep each image as an attachment of the session (``store``: its attachment table)
    and announce it for the request."""
    for image in images:
        target = VisPaths.from_env().attachment_file(session.id, image.name)
        await asyncio.to_thread(write_private, target, image.data)
        row = await asyncio.to_thread(
            store.add_attachment,
            session.id,
            image.name,
            image.media_type,
            target,
            size=image.size,
            kind="image",
            label="attached by the person",
        )
        await session.emit(
            ImageAttached(
                session.id,
                turn_id=turn_id,
                attachment_id=row.id,
                name=image.name,
                media_type=image.media_type,
                size=image.size,
                width=image.width,
                height=image.height,
            )
        )
