"""Which links the app opens or lets the terminal open: web and mail addresses only.

A link's address comes from model text, tools or MCP servers. Any other scheme (``file:``,
``javascript:``, an editor's or a chat app's handler) would hand an address someone else chose
to whatever program the system registered for it, one click away. And a link's text can
name another address than the one it opens (``[https://github.com/x](https://evil.example)``):
:func:`disguises` tells when its address must be shown beside it."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

SAFE_LINK_SCHEMES = ("http", "https", "mailto")


def opens(url: str) -> bool:
    """Whether ``url`` is a web or mail address (the only links that open)."""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:  # a malformed address (an unclosed IPv6 bracket)
        return False
    return scheme in SAFE_LINK_SCHEMES


# A text that reads as an address: an optional scheme, an optional user (mail), a dotted host
# name, an optional port, path, query or fragment; one word.
_ADDRESS = re.compile(
    r"(?:[a-z][a-z0-9+.-]*:(?://)?)?(?:[^\s@/]+@)?[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:[/?#]\S*)?",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(?://)?", re.IGNORECASE)


_TOP_LEVEL = re.compile(r"\.[a-z]{2,}(?::\d+)?(?:[/?#]|$)", re.IGNORECASE)


def disguises(text: str, url: str) -> bool:
    """Whether a link's ``text`` holds an address other than its ``url`` (the scheme, a
    ``www.`` and a closing ``/`` aside), alone or among other words:
    ``[github.com/x](https://evil.example/x)`` and ``[see pypi.org/p/requests](https://evil…)``
    do, ``[github.com/x](https://github.com/x)`` and ``[the docs](https://evil.example)`` do
    not. A word counts as an address when its last name part is letters (``e.g.`` or
    ``1.2.3`` do not)."""
    for word in text.split():
        word = word.strip("()[]<>{},;:!?'\"`*_").rstrip(".")
        if _ADDRESS.fullmatch(word) and _TOP_LEVEL.search(word) and _bare(word) != _bare(url):
            return True
    return False


def _bare(address: str) -> str:
    bare = _SCHEME.sub("", address.strip()).casefold().rstrip("/")
    return bare.removeprefix("www.")
