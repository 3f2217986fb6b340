"""The host side of ``vis.attach`` and its readers: versioned files of the running
``python_execution`` block in the store, the images shown to the model as they are loaded,
and the same functions as the model's sandbox tools."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.attachments import Stored, kind_of
from vis_core.extension.context import CallContext, current_call
from vis_core.extension_host.gateway import shown_change
from vis_core.paths import VisPaths, write_private
from vis_core.providers.base import ImagePart

if TYPE_CHECKING:
    from vis_core.extension_host.host_port import HostPort
    from vis_core.tools.registry import HostTool


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
    folder = VisPaths.from_env().attachments_dir / session_id
    target = folder / f"{uuid.uuid4().hex[:12]}-{name}"
    tmp = target.with_name(target.name + ".tmp")
    write_private(tmp, data)
    tmp.replace(target)

    def row() -> dict[str, Any]:
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

    if call.owner == "vis":  # the model's own attach() is an Activity already
        return row()
    from vis_core.model.activity import ActivityFile, ActivityImage

    with shown_change(call, host, "attach", "Attach file") as shown:  # openable in the transcript
        descriptor = row()
        block = ActivityImage if descriptor["kind"] == "image" else ActivityFile
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


def find(host: HostPort, session_id: str, key: str, version: int | None) -> Stored | None:
    row = host.store.get_attachment(session_id, key, version)
    return None if row is None else stored(row)


def listed(host: HostPort, session_id: str, filename: str | None) -> list[dict[str, Any]]:
    rows = host.store.list_attachments(session_id, filename)
    return [stored(row).descriptor() for row in rows]


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


def attachment_tools() -> list[HostTool]:
    """The sandbox functions ``attach``, ``list_attachments``, ``get_attachment``,
    ``read_attachment`` and ``show_attachment`` as host tools."""
    from vis_core.extension.attachments import (
        attach,
        get_attachment,
        list_attachments,
        read_attachment,
        show_attachment,
    )
    from vis_core.model.activity import Activity, SymbolTag
    from vis_core.tools.registry import HostTool

    return [
        HostTool("attach", attach, SymbolTag.MUTATION, Activity("Attach file")),
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
