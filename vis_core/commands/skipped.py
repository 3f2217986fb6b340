"""Which of the project's files Vis skipped may offer a command it does not know."""

from __future__ import annotations

from vis_core.commands.files import project_files_of
from vis_core.extension_host.discovery import scan_snapshot
from vis_core.paths import control_files
from vis_core.settings.reading import SettingsReader
from vis_core.settings.trust_notice import skipped_command


def skipped_offer(settings: SettingsReader, name: str) -> str | None:
    """Why ``/name`` may be missing: the project's command files of that name, else its
    extensions, that Vis skipped at the start (or the last ``/reload``), its trust never
    given or lapsed, and the ``vis trust`` command that loads them; None when it skipped
    none. A command file's name says the command it defines; an extension's code did not
    run, so which of them declares ``/name`` is not known: each is named."""
    if settings.trusted:
        return None
    snapshot = settings.snapshot  # holds no command file of a project never trusted
    on_disk = (path.relative_to(snapshot.root).as_posix() for path in control_files(snapshot.root))
    files = project_files_of(on_disk, name)
    entries = [
        f"{candidate.path.name}/" if candidate.is_package else candidate.path.name
        for candidate in scan_snapshot(snapshot, set())
    ]
    if not files and not entries:
        return None
    return skipped_command(name, snapshot.root, entries, lapsed=settings.trust_lapsed, files=files)
