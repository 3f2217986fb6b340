"""SDK features this Vis documents but does not implement yet, and how it says so."""

from __future__ import annotations

OUT_OF_SCOPE = (
    "is not available in this version of Vis: speech, drafts, network filters and "
    "providers declared by extensions are not implemented yet"
)

# Names a model or an extension author may look up, folded to lower case without ``vis.``.
UNAVAILABLE_NAMES = frozenset(
    {
        "speech",
        "draft",
        "drafts",
        "draft_create",
        "draft_sync",
        "draft_approve",
        "draft_discard",
        "network_filters",
        "networkfilter",
        "network filters",
        "provider",
        "providers",
    }
)


def unavailable_note(name: str) -> str | None:
    """What ``doc(name)`` says of a feature that is not implemented, or None."""
    folded = name.strip().lower().removeprefix("vis.")
    return f"{name} {OUT_OF_SCOPE}." if folded in UNAVAILABLE_NAMES else None
