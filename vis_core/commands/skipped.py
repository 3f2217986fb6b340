"""Which of the project's extensions Vis skipped may offer a command it does not know."""

from __future__ import annotations

from vis_core.extension_host.discovery import scan_snapshot
from vis_core.settings.reading import SettingsReader
from vis_core.settings.trust_notice import skipped_command


def skipped_offer(settings: SettingsReader, name: str) -> str | None:
    """Why ``/name`` may be missing: the project's extensions Vis skipped at the start (or
    the last ``/reload``), its trust never given or lapsed, and the ``vis trust`` command
    that loads them; None when it skipped none. Their code did not run, so which of them
    declares ``/name`` is not known: each is named."""
    if settings.trusted:
        return None
    entries = [
        f"{candidate.path.name}/" if candidate.is_package else candidate.path.name
        for candidate in scan_snapshot(settings.snapshot, set())
    ]
    if not entries:
        return None
    return skipped_command(name, settings.snapshot.root, entries, lapsed=settings.trust_lapsed)
