"""What an attachment is and who sees it: the closed sets ``vis.attach`` and the store share."""

from __future__ import annotations

from enum import StrEnum


class AttachmentKind(StrEnum):
    """What an attachment holds, from its media type (stored as the value)."""

    IMAGE = "image"
    TABLE = "table"
    DOCUMENT = "document"  # shown to the person only (PDF, HTML)
    AUDIO = "audio"
    VIDEO = "video"
    TEXT = "text"
    FILE = "file"


class Audience(StrEnum):
    """Who sees an attachment (stored as the value)."""

    BOTH = "both"
    USER = "user"
    MODEL = "model"
