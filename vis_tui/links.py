"""Which links the app opens or lets the terminal open: web and mail addresses only.

A link's address comes from model text, tools or MCP servers. Any other scheme (``file:``,
``javascript:``, an editor's or a chat app's handler) would hand an address someone else chose
to whatever program the system registered for it, one click away."""

from __future__ import annotations

from urllib.parse import urlsplit

SAFE_LINK_SCHEMES = ("http", "https", "mailto")


def opens(url: str) -> bool:
    """Whether ``url`` is a web or mail address (the only links that open)."""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:  # a malformed address (an unclosed IPv6 bracket)
        return False
    return scheme in SAFE_LINK_SCHEMES
