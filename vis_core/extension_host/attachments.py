"""The host side of ``vis.attach`` and its readers: versioned files of the running
``python_execution`` block in the store, the images shown to the model as they are loaded,
and the same functions as the model's sandbox tools."""

from __future__ import annotations

import asyncio
import base64
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.attachments import (
    Stored,
    attach,
    get_attachment,
    kind_of,
    list_attachments,
    read_attachment,
    show_attachment,
)
from vis_core.extension.context import CallContext, current_call
from vis_core.extension_host.gateway import shown_change
from vis_core.model.activity import Activity, ActivityFile, ActivityImage, SymbolTag
from vis_core.model.attachments import AttachmentKind
from vis_core.model.conversation import ImagePart
from vis_core.paths import VisPaths, write_private
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.extension_host.host_port import HostPort
    from vis_core.tools.context import ToolContext


def block_call(what: str) -> tuple[CallContext, str] | None:
    """The bound call of a ``python_execution`` block and its session; None without a call (in
    memory then); ``RuntimeError`` for a call that no block runs (a command, a callback)."""
    call = current_call()
    if call is None:
        return None
    if call.session_id is None or call.iteration_id is None:
        raise RuntimeError(
            f"{what} works only while a python_execution block runs your code (not in a slash "
            "command or callback); call it from a tool"
        )
    return call, call.session_id


def add(
    host: HostPort,
    call: CallContext,
    session_id: str,
    data: bytes,
    name: str,
    media: str,
    audience: str,
    commentable: bool,
    label: str,
) -> dict[str, Any]:
    """Store ``data`` as the next version of ``name`` in the call's session and block."""
    target = VisPaths.from_env().attachment_file(session_id, name)
    tmp = target.with_name(target.name + ".tmp")
    write_private(tmp, data)
    tmp.replace(target)
    added = host.store.add_attachment(
        session_id,
        name,
        media,
        target,
        size=len(data),
        kind=kind_of(media),
        audience=audience,
        commentable=bool(commentable),
        label=label,
        iteration_id=call.iteration_id,
    )
    return stored(added).descriptor()


async def add_shown(
    call: CallContext, name: str, label: str, adding: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """``adding``, :func:`add` for an extension's call (in a thread, awaited on the host's
    loop), shown as an Activity of its own, openable in the transcript (the model's own
    ``attach()`` is an Activity already)."""
    async with shown_change(call, "attach", "Attach file") as shown:
        descriptor = await asyncio.to_thread(adding)
        block = ActivityImage if descriptor["kind"] == AttachmentKind.IMAGE else ActivityFile
        shown.summary = f"{name} · version {descriptor['version']}" + (
            f" · {label}" if label else ""
        )
        shown.content = (block(name, label),)
    return descriptor


def stored(row: Any) -> Stored:
    return Stored(
        row.id,
        row.filename,
        row.version,
        row.media_type,
        row.kind,
        row.size,
        str(row.audience),
        row.commentable,
        row.label,
        path=row.path,
    )


def load_shown_image(store: Any, session_id: str, attachment_id: str) -> ImagePart | None:
    """The stored image ``attachment_id`` of the session as the model receives it, or None
    when its row or bytes are gone (a deleted session folder, say)."""
    row = store.get_attachment(session_id, attachment_id)
    if row is None or row.id != attachment_id:
        return None
    try:
        data = Path(row.path).read_bytes()
    except OSError:
        return None
    return ImagePart(row.media_type, base64.b64encode(data).decode("ascii"))


def model_attach(files: ToolContext) -> Callable[..., dict[str, Any]]:
    """The model's ``attach``: a path is read like ``cat`` reads it (the jail's roots, Vis's
    own folders hidden, the ``fs_access`` op hooks, never through a link leading out)."""

    @functools.wraps(attach)  # attach's signature and doc: what the model is shown
    def attach_for_model(
        source: Any, filename: str | None = None, **options: Any
    ) -> dict[str, Any]:
        if isinstance(source, str | os.PathLike):
            target = files.resolve(source, tool="attach")
            shown = files.display(target)
            try:
                data = files.read_bytes(target, tool="attach")
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                raise FileNotFoundError(
                    f"attach: {shown} is not a file; check the path with ls()"
                ) from None
            source, filename = data, filename or target.name
        return attach(source, filename, **options)

    return attach_for_model


def attachment_tools(files: ToolContext) -> list[HostTool]:
    """The sandbox functions ``attach``, ``list_attachments``, ``get_attachment``,
    ``read_attachment`` and ``show_attachment`` as host tools (``attach`` reading paths
    through ``files``, the session's tool context)."""
    return [
        HostTool("attach", model_attach(files), SymbolTag.MUTATION, Activity("Attach file")),
        HostTool(
            "list_attachments",
            list_attachments,
            SymbolTag.OBSERVATION,
            Activity("List attachments"),
        ),
        HostTool(
            "get_attachment", get_attachment, SymbolTag.OBSERVATION, Activity("Read attachment")
        ),
        HostTool(
            "read_attachment", read_attachment, SymbolTag.OBSERVATION, Activity("Read attachment")
        ),
        HostTool(
            "show_attachment", show_attachment, SymbolTag.OBSERVATION, Activity("Show attachment")
        ),
    ]
