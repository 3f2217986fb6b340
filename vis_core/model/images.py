"""Images the person sends: their types by magic bytes, cheap dimensions, the size cap."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

# Anthropic's 5 MB limit per image counts its base64 text: 3.9 MB of bytes (OpenAI's is larger)
MAX_IMAGE_BYTES = 5 * 1024 * 1024 * 3 // 4
MAX_SOURCE_BYTES = 50 * 1024 * 1024  # larger files are refused, not downscaled
MAX_SOURCE_PIXELS = 80_000_000  # a header claiming more is refused before decoding
DOWNSCALE_EDGE = 2048  # the long edge of a downscaled image (models scale further anyway)
# media type -> (the name a person knows, the file suffixes that claim it)
IMAGE_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "image/png": ("PNG", (".png",)),
    "image/jpeg": ("JPEG", (".jpg", ".jpeg")),
    "image/gif": ("GIF", (".gif",)),
    "image/webp": ("WebP", (".webp",)),
}
IMAGE_SUFFIXES = frozenset(s for _, suffixes in IMAGE_TYPES.values() for s in suffixes)
# the only decoders Pillow may pick (``Image.open(..., formats=DECODERS)``): left to guess, it
# reads an EPS (whatever its name) by running Ghostscript, ``gs`` by name off PATH, on the host
DECODERS = tuple(name.upper() for name, _ in IMAGE_TYPES.values())


class ImageRefused(ValueError):
    """An image the person named that cannot be sent; the message says why and what to do."""


class NotAnImage(ImageRefused):
    """A file whose bytes are not the image its name claims (or no image Vis can send)."""


class ImageTooLarge(ImageRefused):
    """An image above :data:`MAX_IMAGE_BYTES`."""


class ImagesNotAccepted(ImageRefused):
    """The session's model takes no image input."""


@dataclass(frozen=True)
class PersonImage:
    """An image the person attached to a request: its name, type, bytes and dimensions
    (0 when the header did not say them)."""

    name: str
    media_type: str
    data: bytes
    width: int = 0
    height: int = 0

    @property
    def size(self) -> int:
        return len(self.data)


def is_image_name(name: str) -> bool:
    """Whether a file name claims an image type Vis sends (by its suffix)."""
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in IMAGE_SUFFIXES


def claimed_type(name: str) -> str | None:
    """The media type a file name's suffix claims, or None."""
    lowered = name.lower()
    for media, (_, suffixes) in IMAGE_TYPES.items():
        if lowered.endswith(suffixes):
            return media
    return None


def sniff(data: bytes) -> tuple[str, int, int] | None:
    """(media type, width, height) read from the image's first bytes; None: not an image of
    a type Vis sends. A dimension the header does not hold cheaply is 0."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        if data[12:16] == b"IHDR" and len(data) >= 24:
            width, height = struct.unpack(">II", data[16:24])
            return "image/png", width, height
        return "image/png", 0, 0
    if data[:6] in (b"GIF87a", b"GIF89a"):
        if len(data) >= 10:
            width, height = struct.unpack("<HH", data[6:10])
            return "image/gif", width, height
        return "image/gif", 0, 0
    if data.startswith(b"\xff\xd8\xff"):
        return ("image/jpeg", *_jpeg_size(data))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("image/webp", *_webp_size(data))
    return None


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from a JPEG's start-of-frame segment (0, 0 when not found)."""
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return 0, 0
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return 0, 0


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return 0, 0


def human_size(size: int) -> str:
    """``812 B``, ``14.2 kB``, ``3.1 MB``."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def checked_image(name: str, data: bytes) -> PersonImage:
    """``data`` as an image to send, named ``name``: :class:`NotAnImage` when its bytes are no
    image Vis sends or not the type its name says; above the cap it is downscaled (Pillow),
    and :class:`ImageTooLarge` when that cannot bring it under the cap."""
    found = sniff(data)
    claimed = claimed_type(name)
    if found is None:
        what = f"a {IMAGE_TYPES[claimed][0]} image" if claimed else "a PNG, JPEG, GIF or WebP image"
        raise NotAnImage(f"{name} is not {what}: its bytes do not start like one")
    media, width, height = found
    if claimed is not None and claimed != media:
        raise NotAnImage(
            f"{name} is not a {IMAGE_TYPES[claimed][0]} image: its bytes are "
            f"{IMAGE_TYPES[media][0]}. Rename it to its real type and attach it again."
        )
    if len(data) > MAX_IMAGE_BYTES:
        return downscaled(name, data, width * height)
    return PersonImage(name, media, data, width, height)


def _too_large(name: str, size: int, why: str) -> ImageTooLarge:
    return ImageTooLarge(
        f"{name} is {human_size(size)}; an image may be at most {human_size(MAX_IMAGE_BYTES)} "
        f"and {why}. Save a smaller copy and attach that."
    )


def downscaled(name: str, data: bytes, pixels: int) -> PersonImage:
    """An image above the cap made smaller (long edge at most :data:`DOWNSCALE_EDGE`, then
    smaller still) and saved as JPEG, or as PNG where it has transparency; ``pixels``: its
    size as the header says, refused above :data:`MAX_SOURCE_PIXELS` before decoding."""
    if len(data) > MAX_SOURCE_BYTES:
        raise _too_large(
            name, len(data), f"Vis downscales only up to {human_size(MAX_SOURCE_BYTES)}"
        )
    if not 0 < pixels <= MAX_SOURCE_PIXELS:
        raise _too_large(name, len(data), "its size in pixels is unknown or too large to downscale")
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data), formats=DECODERS) as source:
            width, height = source.size  # what the decoder builds: a header can say less
            if width * height > MAX_SOURCE_PIXELS:
                raise _too_large(
                    name, len(data), f"its {width}×{height} pixels, too many to downscale"
                )
            source.load()
            picture = source.convert("RGBA" if _has_alpha(source) else "RGB")
    except ImageTooLarge:
        raise
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise _too_large(name, len(data), f"it could not be downscaled ({exc})") from None
    edge = min(max(picture.size), DOWNSCALE_EDGE)
    while True:
        smaller = picture.copy()
        smaller.thumbnail((edge, edge))
        out = io.BytesIO()
        if smaller.mode == "RGBA":
            smaller.save(out, format="PNG", optimize=True)
            media = "image/png"
        else:
            smaller.save(out, format="JPEG", quality=85)
            media = "image/jpeg"
        if out.tell() <= MAX_IMAGE_BYTES:
            return PersonImage(name, media, out.getvalue(), *smaller.size)
        if edge <= 256:
            raise _too_large(name, len(data), "downscaling did not bring it under that")
        edge = max(256, edge * 3 // 4)


def _has_alpha(picture: Any) -> bool:
    return picture.mode in ("RGBA", "LA", "PA") or "transparency" in picture.info


def describe(name: str, media_type: str, size: int, width: int = 0, height: int = 0) -> str:
    """``shot.png · PNG · 14.2 kB · 640×480``: an attachment row's text."""
    kind = IMAGE_TYPES.get(media_type, (media_type, ()))[0]
    parts = [name, kind, human_size(size)]
    if width and height:
        parts.append(f"{width}×{height}")
    return " · ".join(parts)
