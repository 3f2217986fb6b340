"""``vis.attach`` and its readers: the file's bytes and type are worked out here, kept by the
runtime (the running ``python_execution`` block's session), or in memory outside Vis."""

from __future__ import annotations

import io
import mimetypes
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.extension.runtime import current_runtime
from vis_core.model.attachments import AttachmentKind, Audience

OCTET_STREAM = "application/octet-stream"
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


def kind_of(media_type: str) -> AttachmentKind:
    if media_type.startswith("image/"):
        return AttachmentKind.IMAGE
    if media_type in TABLES:
        return AttachmentKind.TABLE
    if media_type in USER_ONLY:
        return AttachmentKind.DOCUMENT
    if media_type.startswith("audio/"):
        return AttachmentKind.AUDIO
    if media_type.startswith("video/"):
        return AttachmentKind.VIDEO
    if media_type.startswith("text/") or media_type == "application/json":
        return AttachmentKind.TEXT
    return AttachmentKind.FILE


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
            "kind": str(self.kind),  # plain strings: the descriptor crosses processes
            "size": self.size,
            "audience": str(self.audience),
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

    def add(
        self,
        data: bytes,
        name: str,
        media: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        with self.lock:
            version = 1 + sum(1 for item in self.items if item.filename == name)
            item = Stored(
                uuid.uuid4().hex,
                name,
                version,
                media,
                kind_of(media),
                len(data),
                audience,
                bool(commentable),
                label,
                data=data,
            )
            self.items.append(item)
        return item.descriptor()

    def listed(self, filename: str | None) -> list[dict[str, Any]]:
        with self.lock:
            items = list(self.items)
        return [i.descriptor() for i in items if filename is None or i.filename == filename]

    def find(self, key: str, version: int | None) -> Stored | None:
        with self.lock:
            items = list(self.items)
        found = next((item for item in items if item.id == key), None)
        if found is None:
            versions = [item for item in items if item.filename == key]
            if versions and version is None:
                found = versions[-1]
            elif versions and version is not None and version < 0:
                found = versions[version] if -version <= len(versions) else None
            elif versions:
                found = next((item for item in versions if item.version == version), None)
        return found

    def show(self, found: Stored) -> None:
        with self.lock:
            self.shown.append(found.id)


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


def _filename(name: Any) -> str:
    """The last part of ``name``, which must be a file's name: not empty nor ``..``, no NUL, and
    text (a lone surrogate cannot be stored). Such a name failed later, as ``embedded null
    byte`` or a ``UnicodeEncodeError``, or was kept as ``..``."""
    if not isinstance(name, str):
        raise TypeError(f"vis.attach(): the filename must be a str, not {type(name).__name__}")
    last = Path(name).name
    if not last.strip() or last == "..":
        raise ValueError(f"vis.attach(): {name!r} names no file; give one such as 'totals.csv'")
    if any(c == "\0" or "\ud800" <= c <= "\udfff" for c in last):
        raise ValueError(
            f"vis.attach(): the filename {last!r} holds a NUL or a lone surrogate; "
            "give a name of plain text such as 'totals.csv'"
        )
    return last


def _audience(audience: str, media_type: str) -> Audience:
    if audience not in tuple(Audience):
        known = ", ".join(Audience)
        raise ValueError(f"audience must be one of {known}, not {audience!r}")
    if media_type in USER_ONLY:
        if audience == Audience.MODEL:
            raise ValueError(f"{media_type} is for the user only; use audience='user'")
        return Audience.USER
    return Audience(audience)


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
    name = _filename(name)
    media = media_type or media_type_of(data, name)
    aud = _audience(audience, media)
    return current_runtime().attachment_add(data, name, media, aud.value, bool(commentable), label)


def missing(key: str, version: int | None, what: str) -> LookupError:
    """The error of a reader that found no attachment ``key`` (at ``version``)."""
    suffix = "" if version is None else f" version {version}"
    return LookupError(f"{what}: no attachment {key!r}{suffix}; list_attachments() lists them")


def check_shown(found: Stored) -> None:
    """Raise ``ValueError`` unless the model can be shown ``found`` (an image it may see)."""
    if found.kind != AttachmentKind.IMAGE:
        raise ValueError(f"show_attachment shows images; {found.filename} is {found.media_type}")
    if found.audience == Audience.USER:
        raise ValueError(f"{found.filename} has audience 'user', so the model does not see it")


def _target(target: Any) -> str:
    if isinstance(target, dict):
        target = target.get("id")
    if not isinstance(target, str) or not target.strip():
        raise TypeError("give an attachment filename, id or descriptor dict")
    return target


def list_attachments(filename: str | None = None) -> list[dict[str, Any]]:
    """Every attachment (every version of ``filename`` when given), oldest first."""
    if filename is not None and not isinstance(filename, str):
        raise TypeError(
            f"vis.list_attachments(): the filename must be a str, not {type(filename).__name__}"
        )
    return current_runtime().attachment_list(filename)


def get_attachment(target: Any, version: int | None = None) -> dict[str, Any]:
    """The descriptor (no bytes) of a filename's latest or given version, an id or descriptor."""
    found = current_runtime().attachment_find(_target(target), version, "vis.get_attachment()")
    return found.descriptor()


def read_attachment(target: Any, version: int | None = None) -> bytes:
    """The bytes of an attachment (the only reader that returns them)."""
    return current_runtime().attachment_read(_target(target), version)


def show_attachment(target: Any, version: int | None = None) -> dict[str, Any]:
    """Show a stored image to the model: the result of the running block carries it."""
    return current_runtime().attachment_show(_target(target), version)


def stored_bytes(found: Stored) -> bytes:
    """The bytes of ``found``: kept in memory, or read from its file."""
    if found.data is not None:
        return found.data
    try:
        return Path(found.path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"the bytes of attachment {found.filename} v{found.version} are missing from "
            f"{found.path}"
        ) from None
