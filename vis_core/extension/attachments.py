"""``vis.attach`` and its readers: versioned files of a ``python_execution`` block, or in memory."""

from __future__ import annotations

import base64
import io
import mimetypes
import os
import threading
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vis_core.extension.context import CallContext
from vis_core.extension_host.gateway import bound_call, host_of
from vis_core.paths import VisPaths, write_private
from vis_core.providers.base import ImagePart

OCTET_STREAM = "application/octet-stream"
AUDIENCES = ("both", "user", "model")
USER_ONLY = frozenset({"application/pdf", "text/html"})
TABLES = frozenset({"text/csv", "text/tab-separated-values"})
_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"%PDF-", 0, "application/pdf"),
    (b"BM", 0, "image/bmp"),
    (b"\x1f\x8b", 0, "application/gzip"),
    (b"PK\x03\x04", 0, "application/zip"),
    (b"OggS", 0, "audio/ogg"),
    (b"fLaC", 0, "audio/flac"),
    (b"ID3", 0, "audio/mpeg"),
)


def sniff(data: bytes) -> str | None:
    """The media type that the bytes themselves show, or None."""
    for magic, offset, media in _SIGNATURES:
        if data[offset : offset + len(magic)] == magic:
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[4:8] == b"ftyp":
        return "video/mp4"
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
        return "image/svg+xml"
    return None


def media_type_of(data: bytes, filename: str) -> str:
    """From the bytes, then from the filename, else ``application/octet-stream``."""
    return sniff(data) or mimetypes.guess_type(filename)[0] or OCTET_STREAM


def kind_of(media_type: str) -> str:
    if media_type.startswith("image/"):
        return "image"
    if media_type in TABLES:
        return "table"
    if media_type in USER_ONLY:
        return "document"
    if media_type.startswith(("audio/", "video/")):
        return media_type.split("/", 1)[0]
    if media_type.startswith("text/") or media_type == "application/json":
        return "text"
    return "file"


@dataclass(frozen=True)
class Stored:
    """One attachment version: the descriptor fields plus where its bytes are."""

    id: str
    filename: str
    version: int
    media_type: str
    kind: str
    size: int
    audience: str
    commentable: bool
    label: str
    path: str = ""
    data: bytes | None = None

    def descriptor(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "filename": self.filename,
            "version": self.version,
            "media_type": self.media_type,
            "kind": self.kind,
            "size": self.size,
            "audience": self.audience,
            "commentable": self.commentable,
            "label": self.label,
        }


class _Memory:
    """Attachments outside Vis: kept in process memory so a unit test can read them back."""

    def __init__(self) -> None:
        self.items: list[Stored] = []
        self.lock = threading.Lock()
        self.shown: list[str] = []

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.shown.clear()


MEMORY = _Memory()


def _content(source: Any, filename: str | None) -> tuple[bytes, str]:
    """The bytes and filename of a path, bytes, a Matplotlib figure or a Pillow image."""
    if isinstance(source, bytes | bytearray | memoryview):
        if not filename:
            raise ValueError(
                "vis.attach(): bytes need a filename, e.g. vis.attach(data, 'totals.csv')"
            )
        return bytes(source), filename
    if isinstance(source, str | os.PathLike):
        from vis_core.extension.roots import workspace_root

        path = Path(source).expanduser()
        if not path.is_absolute():
            path = workspace_root() / path
        if not path.is_file():
            raise FileNotFoundError(f"vis.attach(): {path} is not a file")
        return path.read_bytes(), filename or path.name
    buffer = io.BytesIO()
    if callable(getattr(source, "savefig", None)):  # a Matplotlib figure
        source.savefig(buffer, format="png")
        return buffer.getvalue(), filename or "figure.png"
    if callable(getattr(source, "save", None)) and hasattr(source, "mode"):  # a Pillow image
        source.save(buffer, format="PNG")
        return buffer.getvalue(), filename or "image.png"
    raise TypeError(
        f"vis.attach() takes a path, bytes, a Matplotlib figure or a Pillow image, not "
        f"{type(source).__name__}"
    )


def _audience(audience: str, media_type: str) -> str:
    if audience not in AUDIENCES:
        raise ValueError(f"audience must be one of {', '.join(AUDIENCES)}, not {audience!r}")
    if media_type in USER_ONLY:
        if audience == "model":
            raise ValueError(f"a {media_type} document is for the user only; use audience='user'")
        return "user"
    return audience


def _where(what: str) -> tuple[CallContext, Any, str | None] | None:
    """The bound call, its store and block; None outside Vis (memory); error without a block."""
    call = bound_call()
    host = host_of(call) if call is not None else None
    if call is None or host is None:
        return None
    if call.session_id is None or call.iteration_id is None:
        raise RuntimeError(
            f"{what} works only while a python_execution block runs your code (not in a slash "
            "command or callback); call it from a tool"
        )
    return call, host, call.iteration_id


def attach(
    source: Any,
    filename: str | None = None,
    *,
    label: str = "",
    media_type: str | None = None,
    audience: str = "both",
    commentable: bool = False,
) -> dict[str, Any]:
    """Store a file as the next version of ``filename`` and return its descriptor dict."""
    data, name = _content(source, filename)
    name = Path(name).name
    if not name.strip():
        raise ValueError("vis.attach(): the filename is empty")
    media = media_type or media_type_of(data, name)
    aud = _audience(audience, media)
    where = _where("vis.attach()")
    if where is None:
        with MEMORY.lock:
            version = 1 + sum(1 for item in MEMORY.items if item.filename == name)
            item = Stored(
                uuid.uuid4().hex,
                name,
                version,
                media,
                kind_of(media),
                len(data),
                aud,
                bool(commentable),
                label,
                data=data,
            )
            MEMORY.items.append(item)
        return item.descriptor()
    call, host, iteration_id = where
    assert call.session_id is not None
    folder = VisPaths.from_env().attachments_dir / call.session_id
    target = folder / f"{uuid.uuid4().hex[:12]}-{name}"
    tmp = target.with_name(target.name + ".tmp")
    write_private(tmp, data)
    tmp.replace(target)
    if call.owner == "vis":  # the model's own attach() is an Activity already
        return _store_row(
            call, host, name, media, target, data, aud, commentable, label, iteration_id
        )
    from vis_core.extension_host.gateway import shown_change
    from vis_core.model.activity import ActivityFile, ActivityImage

    with shown_change(call, host, "attach", "Attach file") as shown:  # openable in the transcript
        descriptor = _store_row(
            call, host, name, media, target, data, aud, commentable, label, iteration_id
        )
        block = ActivityImage if descriptor["kind"] == "image" else ActivityFile
        shown.summary = f"{name} · version {descriptor['version']}" + (
            f" · {label}" if label else ""
        )
        shown.content = (block(name, label),)
    return descriptor


def _store_row(
    call: Any,
    host: Any,
    name: str,
    media: str,
    target: Path,
    data: bytes,
    audience: str,
    commentable: bool,
    label: str,
    iteration_id: str | None,
) -> dict[str, Any]:
    row = host.store.add_attachment(
        call.session_id,
        name,
        media,
        target,
        size=len(data),
        kind=kind_of(media),
        audience=audience,
        commentable=bool(commentable),
        label=label,
        iteration_id=iteration_id,
    )
    return _stored(row).descriptor()


def _stored(row: Any) -> Stored:
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


def _target(target: Any) -> str:
    if isinstance(target, dict):
        target = target.get("id")
    if not isinstance(target, str) or not target.strip():
        raise TypeError("give an attachment filename, id or descriptor dict")
    return target


def _find(target: Any, version: int | None, what: str) -> Stored:
    key = _target(target)
    where = _where(what)
    if where is None:
        with MEMORY.lock:
            items = list(MEMORY.items)
        found = next((item for item in items if item.id == key), None)
        if found is None:
            versions = [item for item in items if item.filename == key]
            if versions and version is None:
                found = versions[-1]
            elif versions and version is not None and version < 0:
                found = versions[version] if -version <= len(versions) else None
            elif versions:
                found = next((item for item in versions if item.version == version), None)
    else:
        call, host, _ = where
        row = host.store.get_attachment(call.session_id, key, version)
        found = None if row is None else _stored(row)
    if found is None:
        suffix = "" if version is None else f" version {version}"
        raise LookupError(f"{what}: no attachment {key!r}{suffix}; list_attachments() lists them")
    return found


def list_attachments(filename: str | None = None) -> list[dict[str, Any]]:
    """Every attachment (every version of ``filename`` when given), oldest first."""
    where = _where("vis.list_attachments()")
    if where is None:
        with MEMORY.lock:
            items = list(MEMORY.items)
        return [i.descriptor() for i in items if filename is None or i.filename == filename]
    call, host, _ = where
    return [_stored(r).descriptor() for r in host.store.list_attachments(call.session_id, filename)]


def get_attachment(target: Any, version: int | None = None) -> dict[str, Any]:
    """The descriptor (no bytes) of a filename's latest or given version, an id or descriptor."""
    return _find(target, version, "vis.get_attachment()").descriptor()


def read_attachment(target: Any, version: int | None = None) -> bytes:
    """The bytes of an attachment (the only reader that returns them)."""
    found = _find(target, version, "vis.read_attachment()")
    if found.data is not None:
        return found.data
    try:
        return Path(found.path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"the bytes of attachment {found.filename} v{found.version} are missing from "
            f"{found.path}"
        ) from None


PENDING_SHOWS: dict[str, list[str]] = {}  # session id -> attachment ids for the next request
_SHOWS_LOCK = threading.Lock()


def queue_shown(session_id: str, attachment_id: str) -> None:
    """Show a stored image of the session with the result of its running call (a direct
    tool's result is presented after its call ended, outside any call context)."""
    with _SHOWS_LOCK:
        PENDING_SHOWS.setdefault(session_id, []).append(attachment_id)


def take_shown(session_id: str) -> list[str]:
    """The ids that ``show_attachment`` queued in the session since the last call (cleared)."""
    with _SHOWS_LOCK:
        return PENDING_SHOWS.pop(session_id, [])


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


def show_attachment(target: Any, version: int | None = None) -> dict[str, Any]:
    """Show a stored image to the model: the result of the running block carries it."""
    found = _find(target, version, "vis.show_attachment()")
    if found.kind != "image":
        raise ValueError(f"show_attachment shows images; {found.filename} is {found.media_type}")
    if found.audience == "user":
        raise ValueError(f"{found.filename} has audience 'user', so the model does not see it")
    call = bound_call()
    if call is None or call.session_id is None:
        MEMORY.shown.append(found.id)
    else:
        with _SHOWS_LOCK:
            PENDING_SHOWS.setdefault(call.session_id, []).append(found.id)
    return replace(found, data=None).descriptor()


def attachment_tools() -> list[Any]:
    """The sandbox functions ``attach``, ``list_attachments``, ``get_attachment``,
    ``read_attachment`` and ``show_attachment`` as host tools."""
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
