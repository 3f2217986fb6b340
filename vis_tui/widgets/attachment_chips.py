"""The images that go with the next request, shown as chips above the prompt."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from vis_core.model.images import PersonImage, describe

REMOVE_HINT = "Backspace at the start of the prompt removes the last pasted image"


class AttachmentChips(Static):
    """One line of chips: each pasted image (name, type, size, dimensions), then each image
    the prompt's text names as ``@path``."""

    DEFAULT_CSS = """
    AttachmentChips { height: auto; margin: 0 2; }
    """

    _shown: tuple[list[str], bool] = ([], False)  # the chips and whether the hint follows

    def show(self, pasted: list[PersonImage], mentioned: list[str]) -> None:
        """Show these chips; the same ones again (each key typed) change nothing, as the
        update laid the screen out again, a long transcript too."""
        chips = [describe(i.name, i.media_type, i.size, i.width, i.height) for i in pasted] + [
            f"@{path}" for path in mentioned
        ]
        if (chips, bool(pasted)) == self._shown:
            return
        self._shown = (chips, bool(pasted))
        self.display = bool(chips)
        if not chips:
            self.update("")
            return
        parts: list[tuple[str, str] | str] = []
        for chip in chips:
            parts += [(f" ▣ {chip} ", "$text on $accent 30%"), " "]
        if pasted:
            parts.append((REMOVE_HINT, "$text-muted"))
        self.update(Content.assemble(*parts))

    @property
    def text(self) -> str:
        """What the chips say, as plain text (for tests and the clipboard)."""
        return str(self.visual) if self.display else ""
