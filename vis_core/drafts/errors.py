"""What a draft operation says when it cannot go on: a conflict names its files."""

from __future__ import annotations

from collections.abc import Sequence

from vis_core.model.lines import on_one_line
from vis_core.tools.display import plural


class DraftError(Exception):
    """A draft operation was refused; the text says why and what to do."""


class DraftChanged(DraftError):
    """The draft changed after the person was shown it: nothing was approved."""

    def __init__(self, label: str, files: Sequence[str]) -> None:
        self.files = tuple(files)
        shown = ", ".join(map(on_one_line, self.files[:5])) + (" …" if len(self.files) > 5 else "")
        super().__init__(
            f"draft {label} changed after it was shown for approval "
            f"({plural(len(self.files), 'file')}: {shown}), so nothing was approved; "
            "review it again"
        )


class DraftConflict(DraftError):
    """Sync or approval met a conflict: nothing was changed, the draft stays usable."""

    def __init__(self, what: str, files: Sequence[str]) -> None:
        self.files = tuple(files)
        shown = ", ".join(map(on_one_line, self.files[:20])) + (
            " …" if len(self.files) > 20 else ""
        )
        super().__init__(f"{what}: {plural(len(self.files), 'file')} conflict: {shown}")
